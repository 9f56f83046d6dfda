// The admin API's /config as a reader who should not learn the secrets it describes: every
// `environmentVariables` value (database passwords live there) and every custom header whose
// name carries a credential is "[redacted]", in every scope, whatever the request asks for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const SECRETS = {
  dbPassword: 'pg-pass-7f3a',
  appEnv: 'staging-env-value',
  fromEnv: 'interpolated-key-91c2',
  apiKey: 'api-key-5d8e',
  authorization: 'Bearer bearer-tok-2b6f',
  proxyAuthorization: 'Basic cHJveHk6c2VjcmV0',
  cookie: 'sid=cookie-9a1d',
  setCookie: 'session=set-cookie-4c7e; HttpOnly',
  authToken: 'auth-token-8e2f',
  sessionId: 'session-id-3f9b',
  clientSecret: 'client-secret-6a4c',
  dbPasswd: 'passwd-1e5d',
  password: 'password-7c3a',
  credential: 'credential-0b8f',
  locationKey: 'location-key-2d7e',
};

// Header names that carry a credential, in the spellings a configuration may use.
const SECRET_HEADERS: Record<string, string> = {
  'X-Api-Key': SECRETS.apiKey,
  Authorization: SECRETS.authorization,
  'proxy-authorization': SECRETS.proxyAuthorization,
  COOKIE: SECRETS.cookie,
  'Set-Cookie': SECRETS.setCookie,
  'X-Auth-Token': SECRETS.authToken,
  'X-Session-Id': SECRETS.sessionId,
  'X-Client-SECRET': SECRETS.clientSecret,
  'X-Db-Passwd': SECRETS.dbPasswd,
  'X-Password': SECRETS.password,
  'X-Upstream-Credential': SECRETS.credential,
};

let portico: PorticoProcess;
let adminPort: number;

before(async () => {
  adminPort = await freePort();
  const headers = Object.entries(SECRET_HEADERS)
    .map(([name, value]) => `    ${name}: ${JSON.stringify(value)}\n`)
    .join('');
  portico = await spawnPortico(
    `global:
  admin:
    listen: "127.0.0.1:${adminPort}"
    config: true
  environmentVariables:
    DB_PASSWORD: ${SECRETS.dbPassword}
    APP_ENV: ${SECRETS.appEnv}
  customHeaders:
${headers}    X-Frame-Options: DENY
    X-Forwarded-Key: "{{env.PORTICO_TEST_KEY}}"
hosts:
  - domain: site.test
    customHeaders:
      X-Token: ${SECRETS.authToken}
      X-Visible: "shown"
    locations:
      - path: /api
        customHeaders:
          x-api-key: ${SECRETS.locationKey}
          Cache-Control: no-store
`,
    { env: { ...process.env, PORTICO_TEST_KEY: SECRETS.fromEnv } },
  );
});
after(() => portico?.stop());

interface Config {
  global: Record<string, unknown>;
  hosts: { customHeaders: Record<string, unknown>; locations: Record<string, unknown>[] }[];
}

async function readConfig(path = '/config', headers: Record<string, string> = {}) {
  const reply = await request(adminPort, path, { headers });
  assert.equal(reply.status, 200, reply.text);
  return reply;
}

function assertNoSecret(text: string, what: string): void {
  for (const [name, secret] of Object.entries(SECRETS))
    assert.ok(!text.includes(secret), `${what} shows ${name}: ${text}`);
}

describe('/config never shows a secret', () => {
  it('environmentVariables keep their names, every value is redacted', async () => {
    const config = JSON.parse((await readConfig()).text) as Config;
    assert.deepEqual(config.global.environmentVariables, {
      DB_PASSWORD: '[redacted]',
      APP_ENV: '[redacted]',
    });
  });

  it('custom headers carrying a credential are redacted in every scope, others stay visible', async () => {
    const config = JSON.parse((await readConfig()).text) as Config;
    assert.deepEqual(config.global.customHeaders, {
      ...Object.fromEntries(Object.keys(SECRET_HEADERS).map((name) => [name, '[redacted]'])),
      'X-Frame-Options': 'DENY',
      'X-Forwarded-Key': '[redacted]',
    });
    const host = config.hosts[0]!;
    assert.deepEqual(host.customHeaders, { 'X-Token': '[redacted]', 'X-Visible': 'shown' });
    assert.deepEqual(host.locations[0]!.customHeaders, {
      'x-api-key': '[redacted]',
      'Cache-Control': 'no-store',
    });
  });

  it('no form of the request brings a secret out', async () => {
    // The API serves JSON only; a request for another format, or with a query, gets the same.
    const asks: [string, Record<string, string>][] = [
      ['/config', {}],
      ['/config', { accept: 'application/yaml' }],
      ['/config', { accept: 'text/plain, */*' }],
      ['/config?format=yaml', {}],
      ['/config?raw=1&redact=false', {}],
    ];
    for (const [path, headers] of asks) {
      const reply = await readConfig(path, headers);
      assert.match(String(reply.headers['content-type']), /^application\/json/);
      assertNoSecret(reply.text, `${path} ${JSON.stringify(headers)}`);
    }
    const head = await request(adminPort, '/config', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(
      Number(head.headers['content-length']),
      Buffer.byteLength((await readConfig()).text),
      'HEAD announces the redacted body',
    );
  });

  it('the values are still in force: the server sends the configured headers', async () => {
    const reply = await request(portico.port, '/', { headers: { host: 'site.test' } });
    assert.equal(reply.headers['x-api-key'], SECRETS.apiKey);
    assert.equal(reply.headers['x-forwarded-key'], SECRETS.fromEnv);
  });
});
