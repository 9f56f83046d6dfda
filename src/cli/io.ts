// The streams a command talks to; main() passes the process's own, tests pass their own.
export interface CommandIo {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}
