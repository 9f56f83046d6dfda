// The HTTP → HTTPS redirect's Location. (End to end over real TLS listeners in the HTTPS tests.)
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { withDefaults } from '../../src/config/defaults.js';
import type { Settings } from '../../src/config/properties.js';
import { httpsRedirect } from '../../src/stages/redirects.js';
import { fakeCtx, runStage } from '../helpers/ctx.js';

async function run(
  settings: Settings,
  scheme: 'http' | 'https',
  host: string | undefined,
  path = '/a',
  query = '?b=1',
) {
  const stage = httpsRedirect(withDefaults(settings));
  if (!stage) return 'no stage';
  const { ctx, written } = fakeCtx({
    settings,
    scheme,
    ...(host === undefined ? {} : { host }),
    path,
    query,
  });
  const outcome = await runStage(stage, ctx, written);
  return outcome === 'next' ? 'next' : `${outcome} ${written.header('Location')}`;
}

it('redirects plain HTTP to sport, dropping the port only for 443, keeping path and query', async () => {
  const tls = { secure: true, cert: '/c', key: '/k' };
  assert.equal(
    await run({ ...tls, sport: 443 }, 'http', 'example.com:8080'),
    '301 https://example.com/a?b=1',
  );
  assert.equal(
    await run({ ...tls, sport: 8443 }, 'http', 'example.com'),
    '301 https://example.com:8443/a?b=1',
  );
  assert.equal(
    await run({ ...tls, sport: '127.0.0.1:9443' }, 'http', 'example.com'),
    '301 https://example.com:9443/a?b=1',
  );
  assert.equal(
    await run({ ...tls, sport: 8443 }, 'http', '[::1]:80'),
    '301 https://[::1]:8443/a?b=1',
  );
  assert.equal(await run({ ...tls }, 'https', 'example.com'), 'next');
  assert.equal(
    await run({ ...tls, disableToHTTPSRedirect: true }, 'http', 'example.com'),
    'no stage',
  );
  assert.equal(
    await run({ ...tls, disableNonEncryptedServer: true }, 'http', 'example.com'),
    'no stage',
  );
  assert.equal(await run({}, 'http', 'example.com'), 'no stage');
});
