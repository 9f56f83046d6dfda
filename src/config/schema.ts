// A JSON Schema (draft-07, what YAML editors' language servers read) of the YAML syntax, made from
// the property table so editors autocomplete and check portico.yaml exactly as `validate` does.
import type { PropertyTable } from './property-table.js';
import { LOCATION_CONDITIONS, SCOPES, type Scope } from './properties.js';
import type { Spec } from './types.js';

type Schema = Record<string, unknown>;

const STRING_PATTERNS: Partial<Record<string, string>> = {
  'url-path': '^/',
  'file-extension': '^\\.[^/\\\\\\s]+$',
  'file-name': '^(?!\\.{1,2}$)[^/\\\\\\u0000]+$',
  'media-type': '^[^/\\s;]+/[^/\\s;]+(\\s*;.*)?$',
  'env-name': '^[A-Za-z_][A-Za-z0-9_]*$',
  'env-value': '^[^\\u0000]*$',
  'header-name': "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$",
  'http-method': "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$",
  'http-url': '^https?://',
  'backend-url': '^((https?|h2c)://|unix:/|(http|h2c)\\+unix://)',
  'gateway-url': '^(tcp://[^/]+:\\d+/?|unix:///.+)$',
  command: '\\S',
  'file-mode': '^0?[0-7]{3}$',
  'rate-limit-key': "^(clientIP|uri|header:[!#$%&'*+\\-.^_`|~0-9A-Za-z]+)$",
};

/** `modules`: what a `module` string may be (the property table's). */
export function specSchema(spec: Spec, modules: readonly string[]): Schema {
  const schema = (of: Spec): Schema => specSchema(of, modules);
  switch (spec.kind) {
    case 'bool':
      // YAML `health:` reads as null, which the validator takes as true.
      return { type: spec.bareMeansTrue ? ['boolean', 'null'] : 'boolean' };
    case 'int':
      return { type: 'integer', minimum: spec.min, maximum: spec.max };
    case 'string': {
      if (spec.format === 'module') return { type: 'string', enum: [...modules] };
      const pattern = spec.format && STRING_PATTERNS[spec.format];
      return pattern ? { type: 'string', pattern } : { type: 'string' };
    }
    case 'enum':
      return { type: 'string', enum: [...spec.values] };
    case 'list': {
      const array: Schema = {
        type: 'array',
        items: schema(spec.of),
        ...(spec.nonEmpty ? { minItems: 1 } : {}),
      };
      return spec.single ? { anyOf: [schema(spec.of), array] } : array;
    }
    case 'map': {
      const pattern = spec.keyFormat && STRING_PATTERNS[spec.keyFormat];
      const forbidden = Object.keys(spec.forbiddenKeys ?? {});
      const names: Schema = {
        ...(pattern ? { pattern } : {}),
        ...(forbidden.length > 0
          ? { not: { pattern: `^(?:${forbidden.map(anyCase).join('|')})$` } }
          : {}),
      };
      return {
        type: 'object',
        additionalProperties: schema(spec.values),
        ...(spec.nonEmpty ? { minProperties: 1 } : {}),
        ...(Object.keys(names).length > 0 ? { propertyNames: names } : {}),
      };
    }
    case 'object': {
      const properties: Record<string, Schema> = {};
      for (const [name, field] of Object.entries(spec.fields)) {
        properties[name] = {
          ...schema(field.spec),
          description: field.summary,
          ...(field.default === undefined ? {} : { default: field.default }),
        };
        for (const alias of field.aliases ?? [])
          properties[alias] = {
            ...schema(field.spec),
            description: `Accepted spelling of "${name}".`,
            deprecated: true,
          };
      }
      const required = Object.entries(spec.fields)
        .filter(([, f]) => f.required && !f.aliases?.length)
        .map(([n]) => n);
      // YAML `admin:` reads as null, which the validator takes as the block with no fields.
      const type = spec.bareMeansEmpty ? ['object', 'null'] : 'object';
      return {
        type,
        additionalProperties: false,
        properties,
        ...(required.length ? { required } : {}),
      };
    }
    case 'nullable':
      return { anyOf: [schema(spec.of), { type: 'null' }] };
    case 'union':
      return { anyOf: spec.options.map(schema) };
    case 'section':
      return { type: 'array', items: { $ref: `#/definitions/${spec.scope}` } };
  }
}

/**
 * A pattern matching a name in any case: JSON Schema patterns take no flags, and the validator
 * compares header names case-insensitively.
 */
function anyCase(name: string): string {
  return [...name]
    .map((c) =>
      c.toLowerCase() !== c.toUpperCase()
        ? `[${c.toUpperCase()}${c.toLowerCase()}]`
        : c.replace(/[\\^$.*+?()[\]{}|/]/, '\\$&'),
    )
    .join('');
}

function description(table: PropertyTable, name: string): string {
  const summary = table.row(name)!.summary;
  const modules = table.modulesOf(name);
  return modules.length > 0 ? `${summary} (module: ${modules.join(' or ')})` : summary;
}

function scopeSchema(table: PropertyTable, scope: Scope): Schema {
  const properties: Record<string, Schema> = {};
  for (const name of table.namesIn(scope)) {
    const row = table.row(name)!;
    properties[name] = {
      ...specSchema(row.type, table.modules),
      description: description(table, name),
      ...(row.default === undefined ? {} : { default: row.default }),
    };
  }
  for (const [alias, name] of Object.entries(table.aliases)) {
    const row = table.row(name)!;
    if (row.scopes.includes(scope))
      properties[alias] = {
        ...specSchema(row.type, table.modules),
        description: `Ferron's spelling of "${name}".`,
        deprecated: true,
      };
  }
  return {
    type: ['object', 'null'],
    additionalProperties: false,
    properties,
    // A path, or a condition that says which requests the location takes.
    ...(scope === 'location'
      ? {
          anyOf: ['path', ...LOCATION_CONDITIONS].map((p) => ({
            required: [p],
          })),
        }
      : {}),
  };
}

export function configSchema(properties: PropertyTable): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Portico configuration (YAML)',
    description:
      'Generated from the property table by `portico schema`; docs/configuration.md describes every property.',
    type: 'object',
    additionalProperties: false,
    properties: {
      global: { $ref: '#/definitions/global' },
      hosts: { type: ['array', 'null'], items: { $ref: '#/definitions/host' } },
      include: {
        description: 'Glob patterns of further configuration files, relative to this file.',
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      },
    },
    definitions: Object.fromEntries(SCOPES.map((s) => [s, scopeSchema(properties, s)])),
  };
}
