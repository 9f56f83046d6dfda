// Ferron 1.2's environment overrides (`FERRON_PORT`, `FERRON_CERT`, `FERRON_SNI_*_CERT`,
// `FERRON_ENV_*`…; docs/environment-overrides.md in Ferron's repository), which Docker deployments
// of Ferron rely on, and the same set as `PORTICO_*`: each sets a global property over what the
// files say. Unlike Ferron, an override of one `http2Settings` field, SNI host or environment
// variable leaves the file's others in place. Values are validated like the file's, each error
// naming the variable.
import type { Diagnostics } from './diagnostics.js';
import { entryOf, rawMap, scalar, type Pos, type RawMap, type RawNode } from './raw.js';

export interface EnvOverride {
  /** The variable that set it, as written (`FERRON_PORT`, `PORTICO_SNI_EXAMPLE_COM_CERT`). */
  readonly variable: string;
  /** The property it set, as a model path (`global.port`, `global.http2Settings.maxFrameSize`). */
  readonly path: string;
}

type Kind = 'port' | 'string' | 'int' | 'bool' | 'list';

/** Variable name after the prefix → the global property (and field) it sets. */
const SIMPLE: Readonly<Record<string, readonly [Kind, string, string?]>> = {
  PORT: ['port', 'port'],
  SPORT: ['port', 'sport'],
  HTTP2_INITIAL_WINDOW_SIZE: ['int', 'http2Settings', 'initialWindowSize'],
  HTTP2_MAX_FRAME_SIZE: ['int', 'http2Settings', 'maxFrameSize'],
  HTTP2_MAX_CONCURRENT_STREAMS: ['int', 'http2Settings', 'maxConcurrentStreams'],
  HTTP2_MAX_HEADER_LIST_SIZE: ['int', 'http2Settings', 'maxHeaderListSize'],
  HTTP2_ENABLE_CONNECT_PROTOCOL: ['bool', 'http2Settings', 'enableConnectProtocol'],
  LOG_FILE_PATH: ['string', 'logFilePath'],
  ERROR_LOG_FILE_PATH: ['string', 'errorLogFilePath'],
  CERT: ['string', 'cert'],
  KEY: ['string', 'key'],
  TLS_MIN_VERSION: ['string', 'tlsMinVersion'],
  TLS_MAX_VERSION: ['string', 'tlsMaxVersion'],
  SECURE: ['bool', 'secure'],
  ENABLE_HTTP2: ['bool', 'enableHTTP2'],
  ENABLE_HTTP3: ['bool', 'enableHTTP3'],
  DISABLE_NON_ENCRYPTED_SERVER: ['bool', 'disableNonEncryptedServer'],
  ENABLE_OCSP_STAPLING: ['bool', 'enableOCSPStapling'],
  ENABLE_DIRECTORY_LISTING: ['bool', 'enableDirectoryListing'],
  ENABLE_COMPRESSION: ['bool', 'enableCompression'],
  LOAD_MODULES: ['list', 'loadModules'],
  BLOCKLIST: ['list', 'blocklist'],
};

// Ferron's words for true; anything else is false there too.
const TRUE_WORDS = new Set(['1', 'true', 'yes']);
const FALSE_WORDS = new Set(['0', 'false', 'no', '']);

/**
 * Applies the overrides `env` holds to the raw tree's `global` (made when absent) and says which
 * it applied. Both prefixes set the same property: `PORTICO_` wins, with a warning.
 */
export function applyEnvOverrides(
  root: RawMap,
  env: NodeJS.ProcessEnv,
  diags: Diagnostics,
): EnvOverride[] {
  const applied: EnvOverride[] = [];
  const byPath = new Map<string, string>();
  for (const prefix of ['FERRON_', 'PORTICO_'] as const) {
    const set = (variable: string, path: readonly string[], value: RawNode) => {
      const shown = `global.${path.join('.')}`;
      const earlier = byPath.get(shown);
      if (earlier !== undefined)
        diags.warn(value.pos, shown, `${variable} overrides ${earlier}, which sets it too`);
      byPath.set(shown, variable);
      place(root, ['global', ...path], value);
      const index = applied.findIndex((o) => o.path === shown);
      if (index >= 0) applied.splice(index, 1);
      applied.push({ variable, path: shown });
    };
    for (const [name, [kind, property, field]] of Object.entries(SIMPLE)) {
      const variable = prefix + name;
      const text = env[variable];
      if (text === undefined) continue;
      const pos = envPos(variable);
      const path = field === undefined ? [property] : [property, field];
      set(variable, path, valueOf(kind, text, pos, `global.${path.join('.')}`, diags));
    }
    for (const host of listOf(env[`${prefix}SNI_HOSTS`])) {
      const key = host.replaceAll('.', '_').replaceAll('*', 'WILDCARD').toUpperCase();
      const cert = `${prefix}SNI_${key}_CERT`;
      const keyVariable = `${prefix}SNI_${key}_KEY`;
      // Ferron takes a host only when both are set.
      if (env[cert] === undefined || env[keyVariable] === undefined) {
        diags.warn(
          envPos(`${prefix}SNI_HOSTS`),
          'global.sni',
          `${host} is listed, but ${cert} and ${keyVariable} are not both set: no certificate for it`,
        );
        continue;
      }
      set(cert, ['sni', host, 'cert'], scalar(env[cert], envPos(cert)));
      set(keyVariable, ['sni', host, 'key'], scalar(env[keyVariable], envPos(keyVariable)));
    }
    for (const name of listOf(env[`${prefix}ENV_VARS`])) {
      const variable = `${prefix}ENV_${name.toUpperCase()}`;
      const value = env[variable];
      if (value === undefined)
        diags.warn(
          envPos(`${prefix}ENV_VARS`),
          'global.environmentVariables',
          `${name} is listed, but ${variable} is not set`,
        );
      else set(variable, ['environmentVariables', name], scalar(value, envPos(variable)));
    }
  }
  return applied;
}

/** Where a message about an override points: the variable, as a file name has no line. */
function envPos(variable: string): Pos {
  return { file: `environment variable ${variable}`, line: 0, col: 0 };
}

function listOf(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function valueOf(kind: Kind, text: string, pos: Pos, path: string, diags: Diagnostics): RawNode {
  switch (kind) {
    case 'port':
    case 'int':
      // A port may be `address:port`; anything else not a number is the validator's to refuse.
      return scalar(/^\d+$/.test(text) ? Number(text) : text, pos);
    case 'bool': {
      const word = text.trim().toLowerCase();
      if (!TRUE_WORDS.has(word) && !FALSE_WORDS.has(word))
        diags.warn(
          pos,
          path,
          `"${text}" is not 1, true, yes, 0, false or no: taken as false, as Ferron does`,
        );
      return scalar(TRUE_WORDS.has(word), pos);
    }
    case 'list':
      return { kind: 'list', items: listOf(text).map((item) => scalar(item, pos)), pos };
    case 'string':
      return scalar(text, pos);
  }
}

/** Sets `path` in the tree to `value`, making the maps on the way (replacing a non-map). */
function place(root: RawMap, path: readonly string[], value: RawNode): void {
  let map = root;
  for (const [i, key] of path.entries()) {
    const entry = entryOf(map, key);
    if (i === path.length - 1) {
      if (entry) entry.value = value;
      else map.entries.push({ key, keyPos: value.pos, value });
      return;
    }
    if (entry?.value.kind === 'map') map = entry.value;
    else {
      const made = rawMap([], value.pos);
      if (entry) entry.value = made;
      else map.entries.push({ key, keyPos: value.pos, value: made });
      map = made;
    }
  }
}
