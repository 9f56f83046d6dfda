// One value read against its spec (the property table's types): the typed value, or undefined with
// every problem recorded at its position. validate.ts walks the scopes; this reads what they hold.
import { isAbsolute, resolve } from 'node:path';
import { clip, type Diagnostics } from './diagnostics.js';
import { checkFormat, HIDDEN, shown } from './formats.js';
import { own } from './own.js';
import { rawMap, type Pos, type RawMap, type RawNode } from './raw.js';
import { didYouMean } from './suggest.js';
import { describe, isSensitiveKey, type FieldSpec, type ObjectSpec, type Spec } from './types.js';

export interface ValueOptions {
  /** `convert` keeps `{{env.NAME}}` placeholders: strings holding one skip their format check. */
  readonly placeholders?: boolean;
  /**
   * The directory a file's relative paths are relative to (its own), by the file's name in
   * positions. Absent: paths are kept as written (`convert`).
   */
  readonly baseDir?: (file: string) => string;
}

const PLACEHOLDER = /\{\{\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

/** What was found instead, for "expected …, got …"; of a sensitive value only its kind. */
export function got(node: RawNode, secret = false): string {
  if (node.kind === 'list') return 'a list';
  if (node.kind === 'map') return 'a mapping';
  const v = node.value;
  if (v === null) return 'null';
  if (secret)
    return typeof v === 'string' ? 'a string' : typeof v === 'boolean' ? 'a boolean' : 'a number';
  if (typeof v === 'string') return shown(v);
  return String(v);
}

export class ValueReader {
  constructor(
    readonly diags: Diagnostics,
    readonly options: ValueOptions,
    /** What `loadModules` may name (the table's modules). */
    readonly modules: readonly string[],
  ) {}

  /**
   * Checks one value against its spec; undefined when it is wrong (the error is recorded). A
   * `secret` value (marked sensitive in the property table) is never shown in a message.
   */
  value(spec: Spec, node: RawNode, path: string, secret = false): unknown {
    const wrong = () => {
      this.diags.error(node.pos, path, `expected ${describe(spec)}, got ${got(node, secret)}`);
      return undefined;
    };
    switch (spec.kind) {
      case 'bool':
        if (spec.bareMeansTrue && isNull(node)) return true;
        return node.kind === 'scalar' && typeof node.value === 'boolean' ? node.value : wrong();
      case 'int': {
        if (
          node.kind !== 'scalar' ||
          (typeof node.value !== 'number' && typeof node.value !== 'bigint')
        )
          return wrong();
        const v = node.value;
        if (typeof v === 'number' && !Number.isInteger(v)) return wrong();
        const number = secret ? HIDDEN : String(v);
        if (v > spec.max && spec.maxReason) {
          this.diags.error(
            node.pos,
            path,
            `${number} is too large: the supported maximum is ${spec.max} (${spec.maxReason})`,
          );
          return undefined;
        }
        if (v < spec.min && spec.minReason) {
          this.diags.error(
            node.pos,
            path,
            `${number} is too small: ${spec.minReason} (the smallest allowed is ${spec.min})`,
          );
          return undefined;
        }
        if (v < spec.min || v > spec.max) {
          this.diags.error(node.pos, path, `${number} is out of range for ${describe(spec)}`);
          return undefined;
        }
        return Number(v);
      }
      case 'string': {
        if (node.kind !== 'scalar' || typeof node.value !== 'string') return wrong();
        const v = node.value;
        if (spec.format && !(this.options.placeholders && PLACEHOLDER.test(v))) {
          const problem = checkFormat(spec.format, v, secret, this.modules);
          if (problem) {
            this.diags.error(node.pos, path, problem);
            return undefined;
          }
        }
        // A relative path is relative to the file that wrote it, as `include` globs are.
        if (spec.format === 'path' && this.options.baseDir && !isAbsolute(v))
          return resolve(this.options.baseDir(node.pos.file), v);
        return v;
      }
      case 'enum': {
        if (node.kind !== 'scalar' || typeof node.value !== 'string') return wrong();
        if ((spec.values as readonly string[]).includes(node.value)) return node.value;
        this.diags.error(
          node.pos,
          path,
          `expected ${describe(spec)}, got ${got(node, secret)}${secret ? '' : didYouMean(node.value, spec.values)}`,
        );
        return undefined;
      }
      case 'nullable':
        return node.kind === 'scalar' && node.value === null
          ? null
          : this.value(spec.of, node, path, secret);
      case 'union': {
        const option = spec.options.find((o) => shapeFits(o, node));
        // A word none of the options names: say every form the value may take, not the words alone.
        const unnamed =
          option?.kind === 'enum' &&
          node.kind === 'scalar' &&
          !(option.values as readonly unknown[]).includes(node.value);
        return option && !unnamed ? this.value(option, node, path, secret) : wrong();
      }
      case 'list': {
        // A lone value (or object) is the whole list: its messages name the property, not an item
        // the user never wrote.
        if (spec.single && node.kind !== 'list' && shapeFits(spec.of, node)) {
          const v = this.value(spec.of, node, path, secret);
          return v === undefined ? undefined : [v];
        }
        if (node.kind !== 'list') return wrong();
        if (spec.nonEmpty && node.items.length === 0) {
          this.diags.error(node.pos, path, 'expected at least one item');
          return undefined;
        }
        const out = node.items.map((item, i) => this.value(spec.of, item, `${path}[${i}]`, secret));
        return out.includes(undefined) ? undefined : out;
      }
      case 'map': {
        if (node.kind !== 'map') return wrong();
        if (spec.nonEmpty && node.entries.length === 0) {
          this.diags.error(node.pos, path, `expected at least one ${spec.keyLabel}`);
          return undefined;
        }
        // The valid entries are kept even when others are wrong, so the checks that read this
        // mapping (certificate files of the other SNI names) still report in the same run; any
        // error refuses the configuration anyway.
        const out: Record<string, unknown> = {};
        const seen = new Map<string, Pos>();
        for (const e of node.entries) {
          const at = `${path}.${clip(e.key)}`;
          const forbidden = spec.forbiddenKeys && own(spec.forbiddenKeys, e.key.toLowerCase());
          const problem =
            (spec.keyFormat && checkFormat(spec.keyFormat, e.key)) ||
            (forbidden && `${shown(e.key)} is not allowed here: ${forbidden}`);
          // Header names compare case-insensitively, so `Link` and `link` would collide.
          const folded = spec.keyFormat === 'header-name' ? e.key.toLowerCase() : e.key;
          const first = seen.get(folded);
          if (problem) this.diags.error(e.keyPos, at, problem);
          else if (first)
            this.diags.error(e.keyPos, at, `set twice (first at ${first.line}:${first.col})`);
          else seen.set(folded, e.keyPos);
          // A wrong name does not hide what is wrong with its value.
          const v = this.value(spec.values, e.value, at, secret || isSensitiveKey(spec, e.key));
          // Defined, not assigned: assigning a key "__proto__" would set the prototype instead.
          if (!problem && !first && v !== undefined)
            Object.defineProperty(out, e.key, {
              value: v,
              enumerable: true,
              writable: true,
              configurable: true,
            });
        }
        return out;
      }
      case 'object':
        if (spec.bareMeansEmpty && isNull(node))
          return this.object(spec, rawMap([], node.pos), path, secret);
        return node.kind === 'map' ? this.object(spec, node, path, secret) : wrong();
      case 'section':
        return wrong();
    }
  }

  object(spec: ObjectSpec, node: RawMap, path: string, secret: boolean): unknown {
    const out: Record<string, unknown> = {};
    let ok = true;
    for (const e of node.entries) {
      const [fieldName, field] = findField(spec, e.key);
      if (!field) {
        this.diags.error(
          e.keyPos,
          `${path}.${clip(e.key)}`,
          `unknown field of ${spec.label}${didYouMean(e.key, Object.keys(spec.fields))}`,
        );
        ok = false;
        continue;
      }
      if (fieldName !== e.key) {
        this.diags.warn(
          e.keyPos,
          `${path}.${e.key}`,
          `"${e.key}" is accepted as "${fieldName}"; write "${fieldName}"`,
        );
      }
      if (Object.hasOwn(out, fieldName)) {
        this.diags.error(e.keyPos, `${path}.${e.key}`, `"${fieldName}" is set twice`);
        ok = false;
        continue;
      }
      const v = this.value(
        field.spec,
        e.value,
        `${path}.${fieldName}`,
        secret || (field.sensitive ?? false),
      );
      if (v === undefined) ok = false;
      else out[fieldName] = v;
    }
    for (const [name, field] of Object.entries(spec.fields)) {
      if (field.required && !node.entries.some((e) => findField(spec, e.key)[0] === name)) {
        this.diags.error(node.pos, path, `${spec.label} needs "${name}"`);
        ok = false;
      }
    }
    return ok ? out : undefined;
  }
}

function findField(spec: ObjectSpec, key: string): [string, FieldSpec | undefined] {
  const direct = own(spec.fields, key);
  if (direct) return [key, direct];
  for (const [name, field] of Object.entries(spec.fields)) {
    if (field.aliases?.includes(key)) return [name, field];
  }
  return [key, undefined];
}

export function isNull(node: RawNode): boolean {
  return node.kind === 'scalar' && node.value === null;
}

/** Whether a node has the outward shape of a spec, to pick the branch of a union. */
function shapeFits(spec: Spec, node: RawNode): boolean {
  switch (spec.kind) {
    case 'bool':
      return node.kind === 'scalar' && typeof node.value === 'boolean';
    case 'int':
      return (
        node.kind === 'scalar' && (typeof node.value === 'number' || typeof node.value === 'bigint')
      );
    case 'string':
    case 'enum':
      return node.kind === 'scalar' && typeof node.value === 'string';
    case 'nullable':
      return (node.kind === 'scalar' && node.value === null) || shapeFits(spec.of, node);
    case 'union':
      return spec.options.some((o) => shapeFits(o, node));
    case 'list':
      return node.kind === 'list' || (spec.single === true && shapeFits(spec.of, node));
    case 'section':
      return node.kind === 'list';
    case 'map':
    case 'object':
      return node.kind === 'map';
  }
}
