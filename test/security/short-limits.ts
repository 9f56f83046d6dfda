// Preloaded into a spawned Portico (spawnPortico's nodeArgs, after tsx) to shorten its connection
// time limits to PORTICO_TEST_LIMITS (JSON, ConnectionLimits fields): no configuration property
// sets them, and the defaults (30 s for a head) would make a slow-client test take minutes. The
// server reads DEFAULT_LIMITS when it builds each listener, after this module has run.
import { DEFAULT_LIMITS, type ConnectionLimits } from '../../src/server/listener.js';

const limits = process.env.PORTICO_TEST_LIMITS;
if (limits !== undefined) Object.assign(DEFAULT_LIMITS, JSON.parse(limits) as ConnectionLimits);
