// A JSON Schema (draft-07, what YAML editors' language servers read) of the YAML syntax, made from
// the property table so editors autocomplete and check portico.yaml exactly as `validate` does.
import {
  ALIASES,
  MODULES,
  PROPERTIES,
  PROPERTY_NAMES,
  SCOPES,
  modulesOf,
  type PropertyRow,
  type Scope,
} from './properties.js';
import type { Spec } from './types.js';

type Schema = Record<string, unknown>;

const STRING_PATTERNS: Partial<Record<string, string>> = {
  'url-path': '^/',
  'file-extension': '^\\.[^/\\\\\\s]+$',
  'env-name': '^[A-Za-z_][A-Za-z0-9_]*$',
  'env-value': '^[^\\u0000]*$',
  'header-name': "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$",
  'http-url': '^https?://',
  'gateway-url': '^(tcp://[^/]+:\\d+/?|unix:///.+)$',
  command: '\\S',
};

export function specSchema(spec: Spec): Schema {
  switch (spec.kind) {
    case 'bool':
      // YAML `health:` reads as null, which the validator takes as true.
      return { type: spec.bareMeansTrue ? ['boolean', 'null'] : 'boolean' };
    case 'int':
      return { type: 'integer', minimum: spec.min, maximum: spec.max };
    case 'string': {
      if (spec.format === 'module') return { type: 'string', enum: [...MODULES] };
      const pattern = spec.format && STRING_PATTERNS[spec.format];
      return pattern ? { type: 'string', pattern } : { type: 'string' };
    }
    case 'enum':
      return { type: 'string', enum: [...spec.values] };
    case 'list': {
      const array: Schema = {
        type: 'array',
        items: specSchema(spec.of),
        ...(spec.nonEmpty ? { minItems: 1 } : {}),
      };
      return spec.single ? { anyOf: [specSchema(spec.of), array] } : array;
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
        additionalProperties: specSchema(spec.values),
        ...(Object.keys(names).length > 0 ? { propertyNames: names } : {}),
      };
    }
    case 'object': {
      const properties: Record<string, Schema> = {};
      for (const [name, field] of Object.entries(spec.fields)) {
        properties[name] = {
          ...specSchema(field.spec),
          description: field.summary,
          ...(field.default === undefined ? {} : { default: field.default }),
        };
        for (const alias of field.aliases ?? [])
          properties[alias] = {
            ...specSchema(field.spec),
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
      return { anyOf: [specSchema(spec.of), { type: 'null' }] };
    case 'union':
      return { anyOf: spec.options.map(specSchema) };
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

function description(row: PropertyRow): string {
  const modules = modulesOf(row);
  return modules.length > 0 ? `${row.summary} (module: ${modules.join(' or ')})` : row.summary;
}

function scopeSchema(scope: Scope): Schema {
  const properties: Record<string, Schema> = {};
  for (const name of PROPERTY_NAMES) {
    const row: PropertyRow = PROPERTIES[name];
    if (!row.scopes.includes(scope)) continue;
    properties[name] = {
      ...specSchema(row.type),
      description: description(row),
      ...(row.default === undefined ? {} : { default: row.default }),
    };
  }
  for (const [alias, name] of Object.entries(ALIASES)) {
    const row: PropertyRow = PROPERTIES[name];
    if (row.scopes.includes(scope))
      properties[alias] = {
        ...specSchema(row.type),
        description: `Ferron's spelling of "${name}".`,
        deprecated: true,
      };
  }
  return {
    type: ['object', 'null'],
    additionalProperties: false,
    properties,
    ...(scope === 'location' ? { required: ['path'] } : {}),
  };
}

export function configSchema(): Schema {
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
    definitions: Object.fromEntries(SCOPES.map((s) => [s, scopeSchema(s)])),
  };
}
