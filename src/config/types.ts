// The small type language the property table is written in. One spec describes a value's shape;
// the validator, the KDL mapping, `convert`, the JSON Schema and the reference docs all read it,
// and TypeScript infers the typed `Settings` from it, so a property is declared exactly once.

/** Formats that give a string a meaning the validator checks (see formats.ts). */
export type StringFormat =
  | 'http-url' // http:// or https:// base URL (authTo, ACME directory)
  | 'backend-url' // http-url, h2c://, or a Unix socket (proxyTo: config/backend-url.ts)
  | 'gateway-url' // tcp://host:port/ or unix:///path (scgiTo, fcgiTo)
  | 'email'
  | 'regex'
  | 'ip' // an IP literal or `localhost`
  | 'ip-or-cidr'
  | 'domain' // a host name, `*.example.com` or `*`
  | 'listen' // "port", "addr:port" or "[v6addr]:port"
  | 'listener' // as `listen`, or "unix:/absolute/path" (a Unix socket)
  | 'file-mode' // an octal permission mode such as "0660"
  | 'header-name'
  | 'header-value'
  | 'http-method' // a method token, case-sensitive (GET, not get)
  | 'url-path' // starts with `/`
  | 'file-extension' // starts with `.`
  | 'file-name' // one name in a folder: no `/`, not `.` or `..`
  | 'media-type' // `type/subtype`, parameters allowed
  | 'module'
  | 'cipher-suite'
  | 'ecdh-curve'
  | 'env-name'
  | 'env-value' // no NUL: the environment ends a value there
  | 'path' // a filesystem path: non-empty, no NUL; relative ones are made relative to the file
  | 'command' // a program: a name looked up on the PATH or a path, non-empty, no NUL, kept as written
  | 'rate-limit-key'; // `clientIP`, `uri` or `header:NAME`

/** Phantom carrier of the TypeScript type a spec validates to. */
interface Typed<T> {
  readonly __type?: T;
}

export interface BoolSpec extends Typed<boolean> {
  readonly kind: 'bool';
  /** A directive written without a value (YAML `health:`, read as null) means true. */
  readonly bareMeansTrue?: boolean;
}
export interface IntSpec extends Typed<number> {
  readonly kind: 'int';
  /** The name users see in messages and docs: u16, u32, u64, status code, port. */
  readonly label: string;
  readonly min: number;
  readonly max: number;
  /**
   * Why the maximum is below what the label promises (u64 stops at 2^53−1): a value past it is
   * refused by naming the maximum that holds, not the label's range.
   */
  readonly maxReason?: string;
  /** Why the minimum is above what the label suggests (a final status cannot be 1xx). */
  readonly minReason?: string;
}
export interface StringSpec extends Typed<string> {
  readonly kind: 'string';
  readonly format?: StringFormat;
}
export interface EnumSpec<V extends string = string> extends Typed<V> {
  readonly kind: 'enum';
  readonly values: readonly V[];
}
export interface ListSpec<T = unknown> extends Typed<T[]> {
  readonly kind: 'list';
  readonly of: Spec;
  readonly nonEmpty?: boolean;
  /**
   * A lone value stands for a one-item list (`proxyTo: http://a` is `proxyTo: [http://a]`), a lone
   * mapping too when the items are objects.
   */
  readonly single?: boolean;
}
export interface MapSpec<T = unknown> extends Typed<Record<string, T>> {
  readonly kind: 'map';
  readonly keyFormat?: StringFormat;
  readonly values: Spec;
  /** Keys (lower-case) whose values are secrets, e.g. an `Authorization` custom header. */
  readonly sensitiveKeys?: readonly string[];
  /** Words (lower-case) that make a key's value secret wherever the key holds one (`X-Api-Key`). */
  readonly sensitiveKeyWords?: readonly string[];
  /** Every value is a secret and no key is (environment variables: names shown, values not). */
  readonly sensitiveValues?: boolean;
  /** Keys (lower-case) that are refused, each with the reason the message gives. */
  readonly forbiddenKeys?: Readonly<Record<string, string>>;
  readonly keyLabel: string;
  readonly nonEmpty?: boolean;
}
export interface FieldSpec {
  readonly spec: Spec;
  readonly summary: string;
  readonly required?: boolean;
  readonly default?: unknown;
  readonly sensitive?: boolean;
  /** Other spellings accepted with a warning naming this field (Ferron's `user` for `name`). */
  readonly aliases?: readonly string[];
}
export interface ObjectSpec<T = unknown> extends Typed<T> {
  readonly kind: 'object';
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** What one such object is called in messages ("rewrite rule", "user"). */
  readonly label: string;
  /** The block written without a value (YAML `admin:`, read as null) is the block with no fields. */
  readonly bareMeansEmpty?: boolean;
}
export interface NullableSpec<T = unknown> extends Typed<T | null> {
  readonly kind: 'nullable';
  readonly of: Spec;
}
export interface UnionSpec<T = unknown> extends Typed<T> {
  readonly kind: 'union';
  readonly options: readonly Spec[];
}
/** A nested scope (a host's `locations` and `errorConfig`); its entries hold settings. */
export interface SectionSpec extends Typed<never> {
  readonly kind: 'section';
  readonly scope: 'location' | 'errorConfig';
}

export type Spec =
  | BoolSpec
  | IntSpec
  | StringSpec
  | EnumSpec
  | ListSpec
  | MapSpec
  | ObjectSpec
  | NullableSpec
  | UnionSpec
  | SectionSpec;

export type Infer<S> = S extends Typed<infer T> ? T : never;

type FieldsType<F extends Record<string, FieldSpec>> = {
  -readonly [K in keyof F as F[K]['required'] extends true ? K : never]: Infer<F[K]['spec']>;
} & {
  -readonly [K in keyof F as F[K]['required'] extends true ? never : K]?: Infer<F[K]['spec']>;
};

export const bool = (options: { bareMeansTrue?: boolean } = {}): BoolSpec => ({
  kind: 'bool',
  ...options,
});
export const u16 = (): IntSpec => ({ kind: 'int', label: 'u16', min: 0, max: 65535 });
export const port = (): IntSpec => ({ kind: 'int', label: 'port', min: 1, max: 65535 });
export const statusCode = (): IntSpec => ({
  kind: 'int',
  label: 'status code',
  min: 100,
  max: 599,
});
/** A status that ends a response: what a configured code sends, which an informational 1xx cannot. */
export const finalStatusCode = (): IntSpec => ({
  kind: 'int',
  label: 'status code',
  min: 200,
  max: 599,
  minReason: 'a 1xx status is informational and cannot end a response',
});
export const u32 = (min = 0, max = 4294967295): IntSpec => ({
  kind: 'int',
  label: 'u32',
  min,
  max,
});
/** u64 as far as a JavaScript number is exact; larger values are refused, not rounded. */
export const u64 = (): IntSpec => ({
  kind: 'int',
  label: 'u64',
  min: 0,
  max: Number.MAX_SAFE_INTEGER,
  maxReason: '2^53−1, the largest whole number held exactly',
});
export const str = (format?: StringFormat): StringSpec =>
  format ? { kind: 'string', format } : { kind: 'string' };
export const oneOf = <const V extends string>(...values: V[]): EnumSpec<V> => ({
  kind: 'enum',
  values,
});
export const list = <S extends Spec>(
  of: S,
  options: { nonEmpty?: boolean; single?: boolean } = {},
): ListSpec<Infer<S>> => ({
  kind: 'list',
  of,
  ...options,
});
export const nullable = <S extends Spec>(of: S): NullableSpec<Infer<S>> => ({
  kind: 'nullable',
  of,
});
export const either = <A extends Spec, B extends Spec>(
  a: A,
  b: B,
): UnionSpec<Infer<A> | Infer<B>> => ({
  kind: 'union',
  options: [a, b],
});
export const mapOf = <S extends Spec>(
  keyLabel: string,
  values: S,
  extra: {
    keyFormat?: StringFormat;
    sensitiveKeys?: readonly string[];
    sensitiveKeyWords?: readonly string[];
    sensitiveValues?: boolean;
    forbiddenKeys?: Readonly<Record<string, string>>;
    nonEmpty?: boolean;
  } = {},
): MapSpec<Infer<S>> => ({ kind: 'map', keyLabel, values, ...extra });
export const object = <const F extends Record<string, FieldSpec>>(
  label: string,
  fields: F,
  options: { bareMeansEmpty?: boolean } = {},
): ObjectSpec<FieldsType<F>> => ({ kind: 'object', label, fields, ...options });
export const section = (scope: 'location' | 'errorConfig'): SectionSpec => ({
  kind: 'section',
  scope,
});

/** Whether the value under `key` of a mapping is a secret; keys compare case-insensitively. */
export function isSensitiveKey(spec: MapSpec, key: string): boolean {
  if (spec.sensitiveValues) return true;
  const lower = key.toLowerCase();
  return (
    (spec.sensitiveKeys?.includes(lower) ?? false) ||
    (spec.sensitiveKeyWords?.some((word) => lower.includes(word)) ?? false)
  );
}

/** A short human name of a spec, for messages ("expected a u16 or a string"). */
export function describe(spec: Spec): string {
  switch (spec.kind) {
    case 'bool':
      return 'a boolean';
    case 'int':
      return `a ${spec.label} (${spec.min}–${spec.max})`;
    case 'string':
      return 'a string';
    case 'enum':
      return `one of ${spec.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'list':
      return 'a list';
    case 'map':
      return 'a mapping';
    case 'object':
      return 'a mapping';
    case 'nullable':
      return `${describe(spec.of)} or null`;
    case 'union':
      return spec.options.map(describe).join(' or ');
    case 'section':
      return 'a list of mappings';
  }
}

/** The type column of the docs: `u16 or string`, `array of string`, `object`. */
export function typeName(spec: Spec): string {
  switch (spec.kind) {
    case 'bool':
      return 'bool';
    case 'int':
      return spec.label === 'port'
        ? 'u16'
        : spec.label === 'status code'
          ? 'u16 (status code)'
          : spec.label;
    case 'string':
      return 'string';
    case 'enum':
      return spec.values.map((v) => `\`${v}\``).join(' or ');
    case 'list':
      return `${spec.single ? `${typeName(spec.of)} or ` : ''}array of ${typeName(spec.of)}`;
    case 'map':
      return `object (${spec.keyLabel} → ${typeName(spec.values)})`;
    case 'object':
      return 'object';
    case 'nullable':
      return `${typeName(spec.of)} or null`;
    case 'union':
      return spec.options.map(typeName).join(' or ');
    case 'section':
      return 'array of object';
  }
}
