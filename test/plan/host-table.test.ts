// Host selection, CONTRACT.md point 1, without sockets.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { loadConfigText } from '../../src/config/load.js';
import { normalizeAddress } from '../../src/http/ip-list.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { HostTable } from '../../src/plan/host-table.js';
import { Site } from '../../src/plan/site.js';
import type { Resolved } from '../../src/http/resolved.js';

const NO_LOGS = { access: undefined, error: { log: () => undefined } };

function table(yaml: string): HostTable {
  const { config } = loadConfigText(yaml, 'yaml', 'hosts.yaml', { properties: PROPERTY_TABLE });
  assert.ok(config);
  const sites = config.hosts.map(
    (h) =>
      new Site(
        h,
        {
          location: `host ${h.settings.domain ?? ''}/${h.settings.ip ?? ''}`,
        } as unknown as Resolved,
        [],
        NO_LOGS,
      ),
  );
  return new HostTable(
    sites,
    new Site(undefined, { location: 'global' } as unknown as Resolved, [], NO_LOGS),
  );
}
const pick = (t: HostTable, name: string | undefined, ip = '10.0.0.1') =>
  t.match(name, ip).resolved.location;

it('ranks exact over wildcard over *, both selectors over one, then list order', () => {
  const t = table(`hosts:
  - domain: "*"
  - domain: "*.example.com"
  - domain: "*.shop.example.com"
  - domain: www.example.com
  - domain: www.example.com
    ip: 10.0.0.1
  - ip: 10.0.0.2
  - domain: twice.test
  - domain: twice.test
`);
  assert.equal(pick(t, 'www.example.com'), 'host www.example.com/10.0.0.1');
  assert.equal(pick(t, 'www.example.com', '10.0.0.9'), 'host www.example.com/');
  assert.equal(pick(t, 'a.shop.example.com'), 'host *.shop.example.com/');
  assert.equal(pick(t, 'shop.example.com'), 'host *.shop.example.com/');
  assert.equal(pick(t, 'example.com'), 'host *.example.com/');
  assert.equal(pick(t, 'other.test'), 'host */');
  assert.equal(pick(t, undefined), 'host */');
  assert.equal(
    pick(t, 'other.test', '10.0.0.2'),
    'host /10.0.0.2',
    'an ip-only host beats a bare *',
  );
  assert.equal(t.match('twice.test', '10.0.0.1').host?.pos.line, 9, 'ties go to list order');
});

it('falls back to the global configuration', () => {
  assert.equal(pick(table('hosts:\n  - domain: a.test\n'), 'b.test'), 'global');
});

it('normalises IPv4-mapped IPv6 addresses', () => {
  assert.equal(normalizeAddress('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(normalizeAddress('::FFFF:10.0.0.1'), '10.0.0.1');
  assert.equal(normalizeAddress('2001:DB8::1'), '2001:db8::1');
  const t = table(
    'hosts:\n  - ip: "::ffff:10.0.0.3"\n    domain: x.test\n  - ip: localhost\n    domain: x.test\n',
  );
  assert.equal(pick(t, 'x.test', '10.0.0.3'), 'host x.test/::ffff:10.0.0.3');
  assert.equal(pick(t, 'x.test', '127.0.0.1'), 'host x.test/localhost');
  assert.equal(pick(t, 'x.test', '::1'), 'host x.test/localhost');
});
