// Error-log lines about refused connections: each distinct line once a minute at most, so a flood of
// hostile connections from one peer writes one line, not one per connection. The lines remembered
// are bounded; past the bound the oldest is forgotten.
const WINDOW_MS = 60_000;
const REMEMBERED = 1_000;

export class OnceAMinute {
  private readonly said = new Map<string, number>();

  constructor(private readonly log: (line: string) => void) {}

  say(line: string): void {
    const now = Date.now();
    const last = this.said.get(line);
    if (last !== undefined && now - last < WINDOW_MS) return;
    this.said.delete(line);
    this.said.set(line, now);
    if (this.said.size > REMEMBERED) this.said.delete(this.said.keys().next().value!);
    this.log(line);
  }
}
