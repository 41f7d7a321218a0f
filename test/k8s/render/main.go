// Renders a Helm chart the way `helm template` does, with Go's text/template, the sprig function
// library and helm's own template functions (include, tpl, required, toYaml, fromYaml, toJson,
// fromJson, lookup), for machines without a helm binary.
//
// Usage: render -chart DIR [-name RELEASE] [-namespace NS] [-values FILE]... [-notes]
// [-api-versions monitoring.coreos.com/v1,...] [-lookup FILE]. Values files (YAML or JSON) are merged over the
// chart's values.yaml in order, as helm merges them (maps deep-merged, null deletes a key).
// Output: each rendered template as `---` + `# Source: <chart>/templates/<file>` + its text;
// with -notes, NOTES.txt only. There is no cluster: lookup answers from the objects of the
// -lookup file (a JSON or YAML list, e.g. the Secret of an earlier release), else an empty map.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/ioutil"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	yaml2 "gopkg.in/yaml.v2"
	yaml3 "gopkg.in/yaml.v3"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// APIVersions answers .Capabilities.APIVersions.Has like helm's VersionSet.
type APIVersions []string

func (v APIVersions) Has(name string) bool {
	for _, x := range v {
		if x == name {
			return true
		}
	}
	return false
}

type KubeVersion struct {
	Version    string
	Major      string
	Minor      string
	GitVersion string
}

func (k KubeVersion) String() string { return k.Version }

type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions APIVersions
}

// normalize turns parsed YAML into what helm's values hold: JSON types (float64 numbers,
// map[string]interface{}).
func normalize(v interface{}) (interface{}, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out interface{}
	err = json.Unmarshal(b, &out)
	return out, err
}

func readYAMLFile(path string) (map[string]interface{}, error) {
	data, err := ioutil.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw interface{}
	if err := yaml3.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if raw == nil {
		return map[string]interface{}{}, nil
	}
	n, err := normalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	m, ok := n.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("%s: not a map", path)
	}
	return m, nil
}

// merge puts src over dst like helm's coalescing: maps merge, null deletes, the rest replaces.
func merge(dst, src map[string]interface{}) map[string]interface{} {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, sok := v.(map[string]interface{})
		dm, dok := dst[k].(map[string]interface{})
		if sok && dok {
			dst[k] = merge(dm, sm)
		} else {
			dst[k] = v
		}
	}
	return dst
}

// toYAMLValue makes integral floats integers so that toYaml prints 1883, not 1883.0 or 1e+06.
func toYAMLValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(t))
		for k, x := range t {
			out[k] = toYAMLValue(x)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, x := range t {
			out[i] = toYAMLValue(x)
		}
		return out
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	}
	return v
}

func toYAML(v interface{}) string {
	n, err := normalize(v)
	if err != nil {
		return ""
	}
	b, err := yaml2.Marshal(toYAMLValue(n))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func fromYAML(s string) map[string]interface{} {
	var raw interface{}
	m := map[string]interface{}{}
	if err := yaml3.Unmarshal([]byte(s), &raw); err != nil {
		m["Error"] = err.Error()
		return m
	}
	n, err := normalize(raw)
	if err != nil {
		m["Error"] = err.Error()
		return m
	}
	if mm, ok := n.(map[string]interface{}); ok {
		return mm
	}
	return m
}

func fromYAMLArray(s string) []interface{} {
	var raw interface{}
	if err := yaml3.Unmarshal([]byte(s), &raw); err != nil {
		return []interface{}{err.Error()}
	}
	n, _ := normalize(raw)
	if a, ok := n.([]interface{}); ok {
		return a
	}
	return []interface{}{}
}

func toJSON(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

type renderer struct {
	tmpl    *template.Template
	objects []map[string]interface{}
}

// lookup answers like helm's: one object by name, or {items: [...]} for an empty name.
func (r *renderer) lookup(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
	var items []interface{}
	for _, o := range r.objects {
		meta, _ := o["metadata"].(map[string]interface{})
		if o["apiVersion"] != apiVersion || o["kind"] != kind || (namespace != "" && meta["namespace"] != namespace) {
			continue
		}
		if name == "" {
			items = append(items, o)
		} else if meta["name"] == name {
			return o, nil
		}
	}
	if name == "" {
		return map[string]interface{}{"items": items}, nil
	}
	return map[string]interface{}{}, nil
}

func (r *renderer) funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	// helm drops these two: templates must not read the renderer's environment.
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["fromYamlArray"] = fromYAMLArray
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return v, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return v, errors.New(msg)
		}
		return v, nil
	}
	f["lookup"] = r.lookup
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		if err := r.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := r.tmpl.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	return f
}

func main() {
	chartDir := flag.String("chart", "", "chart directory")
	name := flag.String("name", "svc", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	notes := flag.Bool("notes", false, "render NOTES.txt only")
	apiVersions := flag.String("api-versions", "", "comma-separated extra API versions")
	lookupFile := flag.String("lookup", "", "objects lookup finds (JSON or YAML list)")
	var valueFiles listFlag
	flag.Var(&valueFiles, "values", "values file (repeatable)")
	flag.Parse()
	if err := run(*chartDir, *name, *namespace, *notes, *apiVersions, *lookupFile, valueFiles); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func readObjects(path string) ([]map[string]interface{}, error) {
	if path == "" {
		return nil, nil
	}
	data, err := ioutil.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw interface{}
	if err := yaml3.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	n, err := normalize(raw)
	if err != nil {
		return nil, err
	}
	list, ok := n.([]interface{})
	if !ok {
		return nil, fmt.Errorf("%s: not a list", path)
	}
	var out []map[string]interface{}
	for _, x := range list {
		if m, ok := x.(map[string]interface{}); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func run(chartDir, name, namespace string, notes bool, extraAPIs, lookupFile string, valueFiles []string) error {
	if chartDir == "" {
		return errors.New("-chart is required")
	}
	chart, err := readYAMLFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return err
	}
	values, err := readYAMLFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return err
	}
	for _, f := range valueFiles {
		v, err := readYAMLFile(f)
		if err != nil {
			return err
		}
		values = merge(values, v)
	}
	chartName, _ := chart["name"].(string)
	apis := APIVersions{"v1", "apps/v1", "batch/v1", "policy/v1", "autoscaling/v2", "rbac.authorization.k8s.io/v1",
		"discovery.k8s.io/v1", "networking.k8s.io/v1"}
	if extraAPIs != "" {
		apis = append(apis, strings.Split(extraAPIs, ",")...)
	}
	str := func(k string) string { s, _ := chart[k].(string); return s }
	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name": name, "Namespace": namespace, "Service": "Helm", "Revision": 1, "IsInstall": true, "IsUpgrade": false,
		},
		"Chart": map[string]interface{}{
			"Name": chartName, "Version": str("version"), "AppVersion": str("appVersion"),
			"Description": str("description"), "Type": str("type"),
		},
		"Capabilities": Capabilities{
			KubeVersion: KubeVersion{Version: "v1.33.0", Major: "1", Minor: "33", GitVersion: "v1.33.0"},
			APIVersions: apis,
		},
	}

	tdir := filepath.Join(chartDir, "templates")
	entries, err := ioutil.ReadDir(tdir)
	if err != nil {
		return err
	}
	objects, err := readObjects(lookupFile)
	if err != nil {
		return err
	}
	r := &renderer{objects: objects}
	r.tmpl = template.New("gotpl").Option("missingkey=zero")
	r.tmpl.Funcs(r.funcs())
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := ioutil.ReadFile(filepath.Join(tdir, e.Name()))
		if err != nil {
			return err
		}
		full := chartName + "/templates/" + e.Name()
		if _, err := r.tmpl.New(full).Parse(string(data)); err != nil {
			return err
		}
		files = append(files, e.Name())
	}
	sort.Strings(files)
	var out bytes.Buffer
	for _, f := range files {
		isNotes := f == "NOTES.txt"
		if strings.HasPrefix(f, "_") || isNotes != notes {
			continue
		}
		if !isNotes && !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".yml") && !strings.HasSuffix(f, ".tpl") {
			continue
		}
		full := chartName + "/templates/" + f
		data := map[string]interface{}{}
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": full, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := r.tmpl.ExecuteTemplate(&buf, full, data); err != nil {
			return err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if notes {
			out.WriteString(text)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", full, strings.Trim(text, "\n"))
	}
	_, err = os.Stdout.Write(out.Bytes())
	return err
}
