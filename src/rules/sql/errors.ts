// SqlError: a rule SQL statement that cannot be parsed or compiled. The message points at the
// place (`line 1, column 17: expected FROM`); `reason` is the message without the position.
// Raised by the lexer, the parser and the compiler (unknown function, wrong arity, bad FROM).

export class SqlError extends Error {
  override readonly name = "SqlError";
  readonly reason: string;
  readonly line: number;
  readonly column: number;

  constructor(reason: string, line: number, column: number) {
    super(`line ${line}, column ${column}: ${reason}`);
    this.reason = reason;
    this.line = line;
    this.column = column;
  }
}
