// Address lists for the blocklist and nonStandardCodes `users`.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { canonical, IpList } from '../../src/http/ip-list.js';

it('matches addresses, CIDR ranges, IPv6 and IPv4-mapped forms', () => {
  const list = new IpList([
    '192.0.2.1',
    '198.51.100.0/24',
    '2001:db8::/32',
    '::ffff:203.0.113.0/120',
    'localhost',
    '2001:DB8:0:0::9',
  ]);
  for (const yes of [
    '192.0.2.1',
    '198.51.100.255',
    '2001:db8:ffff::1',
    '203.0.113.77',
    '127.0.0.1',
    '::1',
  ])
    assert.ok(list.has(canonical(yes)), yes);
  for (const no of [
    '192.0.2.2',
    '198.51.101.0',
    '2001:db9::1',
    '203.0.114.1',
    '10.0.0.1',
    'garbage',
  ])
    assert.ok(!list.has(canonical(no)), no);
  assert.ok(list.has(canonical('::ffff:192.0.2.1')), 'an IPv4 entry matches the mapped client');
  assert.ok(list.has(canonical('2001:db8::9')));
});
