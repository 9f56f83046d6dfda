// Where the error log's lines go, as every layer below the server sees it.
export interface Logger {
  log(message: string): void;
}
