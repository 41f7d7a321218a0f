{{/* Chart name, object name prefix and labels. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "svc.headless" -}}
{{- printf "%s-headless" (include "svc.fullname" .) -}}
{{- end -}}

{{- define "svc.etcdName" -}}
{{- printf "%s-etcd" (include "svc.fullname" .) -}}
{{- end -}}

{{- define "svc.etcdHeadless" -}}
{{- printf "%s-etcd-headless" (include "svc.fullname" .) -}}
{{- end -}}

{{- define "svc.secretName" -}}
{{- default (include "svc.fullname" .) .Values.auth.existingSecret -}}
{{- end -}}

{{- define "svc.tlsSecretName" -}}
{{- if .Values.tls.secretName -}}
{{- .Values.tls.secretName -}}
{{- else if .Values.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "svc.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "svc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: broker
{{- end -}}

{{- define "svc.etcdSelectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: etcd
{{- end -}}

{{- define "svc.etcdLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "svc.etcdSelectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "svc.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The etcd endpoints the broker connects to (comma list). Bundled members are named
<pod>.<etcd headless service>, resolved in the release's namespace (namespace-independent manifests). */}}
{{- define "svc.etcdServer" -}}
{{- if .Values.etcd.bundled -}}
{{- $scheme := ternary "https" "http" .Values.etcd.tls.enabled -}}
{{- $name := include "svc.etcdName" . -}}
{{- $domain := include "svc.etcdHeadless" . -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "%s://%s-%d.%s:2379" $scheme $name $i $domain) -}}
{{- end -}}
{{- join "," $urls -}}
{{- else -}}
{{- required "etcd.endpoints is required when etcd.bundled is false" (join "," .Values.etcd.endpoints) -}}
{{- end -}}
{{- end -}}

{{/* node.drain_timeout in whole seconds (rounded up); a bare number is milliseconds. */}}
{{- define "svc.drainSeconds" -}}
{{- $d := toString .Values.node.drainTimeout -}}
{{- $n := regexFind "^[0-9]+" $d -}}
{{- if not $n -}}{{- fail (printf "node.drainTimeout %q is not a duration (e.g. 30s)" $d) -}}{{- end -}}
{{- $v := int64 $n -}}
{{- $unit := trimPrefix $n $d -}}
{{- if eq $unit "h" -}}{{ mul $v 3600 }}
{{- else if eq $unit "m" -}}{{ mul $v 60 }}
{{- else if eq $unit "s" -}}{{ $v }}
{{- else if or (eq $unit "ms") (eq $unit "") -}}{{ div (add $v 999) 1000 }}
{{- else -}}{{- fail (printf "node.drainTimeout %q has an unknown unit" $d) -}}
{{- end -}}
{{- end -}}

{{- define "svc.terminationGrace" -}}
{{- $drain := include "svc.drainSeconds" . | int64 -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add $drain 15 -}}
{{- else -}}
{{- $g := .Values.terminationGracePeriodSeconds | int64 -}}
{{- if le $g $drain -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed node.drainTimeout (%d s)" $g $drain) -}}
{{- end -}}
{{- $g -}}
{{- end -}}
{{- end -}}

{{/* A svc.conf value: integral numbers without exponent, quoted when # or edge blanks would be lost. */}}
{{- define "svc.confValue" -}}
{{- $s := toString . -}}
{{- if and (kindIs "float64" .) (eq (. | int64 | float64) .) -}}
{{- $s = . | int64 | toString -}}
{{- end -}}
{{- if or (contains "#" $s) (ne $s (trim $s)) (hasPrefix "\"" $s) -}}
{{- $s | quote -}}
{{- else -}}
{{- $s -}}
{{- end -}}
{{- end -}}

{{/* Listener bind: 0.0.0.0:<port> when enabled, off otherwise. */}}
{{- define "svc.bind" -}}
{{- if .enabled -}}{{ printf "0.0.0.0:%d" (int .port) }}{{- else -}}off{{- end -}}
{{- end -}}

{{/* The client ports: values key -> Kubernetes port name. */}}
{{- define "svc.clientPorts" -}}
mqtt: mqtt
mqtts: mqtts
ws: ws
wss: wss
api: api
apiV2: api-v2
dashboard: dashboard
{{- end -}}
