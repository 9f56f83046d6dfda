// The modules `loadModules` can name, by name. A module exports its stage factory and is listed
// here once; the pipeline asks this map for each name in `loadModules` order.
import type { ModuleName } from '../config/properties.js';
import type { ModuleFactory } from '../server/pipeline.js';

export const MODULE_FACTORIES: ReadonlyMap<ModuleName, ModuleFactory> = new Map<ModuleName, ModuleFactory>([]);
