// Timestamps in response heads and log lines: nearly every call falls in the same second as the one
// before, so each second is formatted once.

/** `format` of the whole second a time (ms since the epoch) falls in, remembered for that second. */
export function oncePerSecond(format: (second: number) => string): (ms: number) => string {
  let second = NaN;
  let value = '';
  return (ms) => {
    const now = Math.floor(ms / 1000);
    if (now !== second) {
      second = now;
      value = format(now);
    }
    return value;
  };
}
