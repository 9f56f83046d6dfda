// CPU time instead of elapsed time, for tests that bound what some work costs: the test files run
// side by side, and other processes on the machine stretch the elapsed time, not the CPU time.

/** Starts counting this process's CPU time (every thread); the function returns it in ms. */
export function cpuClock(): () => number {
  const start = process.cpuUsage();
  return () => {
    const { user, system } = process.cpuUsage(start);
    return (user + system) / 1000;
  };
}
