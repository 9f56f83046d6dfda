// One request's stream through a bridge process, as the exchange drives it: body and WebSocket
// frames out under the bridge's credit, credit back for what the client took, and cancellation.
import { creditFrame, frame, Frame } from './frames.js';

const GIVEN_UP = Buffer.from([1]);

/** The channel a stream goes through (frame-channel.ts). */
export interface StreamChannel {
  write(data: Buffer): void;
  /** Whether the stream is still open in the process. */
  has(id: number): boolean;
}

export class PythonStream {
  /** Body bytes sent that the bridge has not credited yet. */
  outstanding = 0;
  private cancelled = false;
  private givenUp = false;

  constructor(
    private readonly worker: StreamChannel,
    readonly id: number,
  ) {}

  body(chunk: Buffer): void {
    this.outstanding += chunk.length;
    this.worker.write(frame(Frame.Body, this.id, chunk));
  }

  end(): void {
    this.worker.write(frame(Frame.End, this.id));
  }

  /** The reader (Portico) consumed `bytes` of the response. */
  credit(bytes: number): void {
    if (bytes > 0 && this.worker.has(this.id)) this.worker.write(creditFrame(this.id, bytes));
  }

  /** A WebSocket message from the client; `binary`, else text. */
  websocket(data: Buffer, { binary }: { readonly binary: boolean }): void {
    this.outstanding += data.length;
    this.worker.write(frame(binary ? Frame.WsBinary : Frame.WsText, this.id, data));
  }

  websocketClose(code: number): void {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.worker.write(frame(Frame.WsClose, this.id, payload));
  }

  /** The client went away: the application stops what it does for it. */
  cancel(): void {
    this.stop();
  }

  /**
   * A time limit ran out: the application stops, and the payload tells a bridge serving several
   * workers to watch that it does (one serving Portico alone is watched by it: worker.ts).
   */
  giveUp(): void {
    // Also after a cancel (the client left first): only this one asks the bridge to watch.
    if (this.givenUp || !this.worker.has(this.id)) return;
    this.givenUp = true;
    this.cancelled = true;
    this.worker.write(frame(Frame.Cancel, this.id, GIVEN_UP));
  }

  private stop(): void {
    if (this.cancelled || !this.worker.has(this.id)) return;
    this.cancelled = true;
    this.worker.write(frame(Frame.Cancel, this.id));
  }
}
