// Ferron's environment overrides as a Docker deployment uses them: `FERRON_*` (and the same set as
// `PORTICO_*`) over the file, validated like it, shown by `validate`, by `run` and in `/config`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { runCli, runServing } from '../helpers/cli.js';
import { freePort } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-env-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const load = (yaml: string, env: NodeJS.ProcessEnv) =>
  loadConfigText(yaml, 'yaml', 'test.yaml', { env, properties: PROPERTY_TABLE });

describe('FERRON_* and PORTICO_* environment overrides', () => {
  it('sets every property of Ferron’s list over the file, and says which variable set which', () => {
    const { config, diagnostics } = load(
      'global:\n  port: 80\n  http2Settings:\n    maxFrameSize: 32768\n  environmentVariables:\n    KEPT: "yes"\n',
      {
        FERRON_PORT: '8081',
        FERRON_SPORT: '127.0.0.1:8443',
        FERRON_HTTP2_INITIAL_WINDOW_SIZE: '65535',
        FERRON_HTTP2_MAX_CONCURRENT_STREAMS: '50',
        FERRON_HTTP2_ENABLE_CONNECT_PROTOCOL: 'yes',
        FERRON_LOG_FILE_PATH: '/var/log/access.log',
        FERRON_CERT: SERVER_CERT,
        FERRON_KEY: SERVER_KEY,
        FERRON_TLS_MIN_VERSION: 'TLSv1.3',
        FERRON_SECURE: 'true',
        FERRON_ENABLE_COMPRESSION: '0',
        FERRON_LOAD_MODULES: 'cache, rproxy',
        FERRON_BLOCKLIST: '192.0.2.1,198.51.100.0/24',
        FERRON_SNI_HOSTS: 'example.com,*.example.org',
        FERRON_SNI_EXAMPLE_COM_CERT: SERVER_CERT,
        FERRON_SNI_EXAMPLE_COM_KEY: SERVER_KEY,
        FERRON_SNI_WILDCARD_EXAMPLE_ORG_CERT: SERVER_CERT,
        FERRON_SNI_WILDCARD_EXAMPLE_ORG_KEY: SERVER_KEY,
        FERRON_ENV_VARS: 'appMode',
        FERRON_ENV_APPMODE: 'production',
      },
    );
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    const g = config!.global;
    assert.equal(g.port, 8081);
    assert.equal(g.sport, '127.0.0.1:8443');
    // One field set leaves the file's others in place.
    assert.deepEqual(g.http2Settings, {
      maxFrameSize: 32768,
      initialWindowSize: 65535,
      maxConcurrentStreams: 50,
      enableConnectProtocol: true,
    });
    assert.equal(g.logFilePath, '/var/log/access.log');
    assert.equal(g.secure, true);
    assert.equal(g.enableCompression, false);
    assert.equal(g.tlsMinVersion, 'TLSv1.3');
    assert.deepEqual(g.loadModules, ['cache', 'rproxy']);
    assert.deepEqual(g.blocklist, ['192.0.2.1', '198.51.100.0/24']);
    assert.deepEqual(Object.keys(g.sni ?? {}), ['example.com', '*.example.org']);
    assert.deepEqual(g.environmentVariables, { KEPT: 'yes', appMode: 'production' });
    const by = Object.fromEntries(config!.environment!.map((o) => [o.path, o.variable]));
    assert.equal(by['global.port'], 'FERRON_PORT');
    assert.equal(by['global.http2Settings.initialWindowSize'], 'FERRON_HTTP2_INITIAL_WINDOW_SIZE');
    assert.equal(by['global.sni.*.example.org.cert'], 'FERRON_SNI_WILDCARD_EXAMPLE_ORG_CERT');
    assert.equal(by['global.environmentVariables.appMode'], 'FERRON_ENV_APPMODE');
  });

  it('PORTICO_* sets the same properties, and wins over FERRON_* with a warning', () => {
    const { config, diagnostics } = load('global:\n  port: 80\n', {
      FERRON_PORT: '8081',
      PORTICO_PORT: '8082',
      PORTICO_ENABLE_DIRECTORY_LISTING: 'yes',
    });
    assert.equal(config!.global.port, 8082);
    assert.equal(config!.global.enableDirectoryListing, true);
    assert.match(
      diagnostics.map((d) => d.message).join('\n'),
      /PORTICO_PORT overrides FERRON_PORT/,
    );
  });

  it('an invalid value is an error naming the variable; half an SNI pair and an odd boolean warn', () => {
    const bad = load('global:\n  port: 80\n', {
      FERRON_PORT: 'eighty',
      FERRON_TLS_MAX_VERSION: 'SSLv3',
    });
    assert.equal(bad.config, undefined);
    const files = bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.pos.file);
    assert.deepEqual(files.sort(), [
      'environment variable FERRON_PORT',
      'environment variable FERRON_TLS_MAX_VERSION',
    ]);
    const odd = load('global:\n  port: 80\n', {
      FERRON_SECURE: 'enabled',
      FERRON_SNI_HOSTS: 'a.example',
      FERRON_SNI_A_EXAMPLE_CERT: SERVER_CERT,
    });
    assert.equal(odd.config!.global.secure, false);
    assert.equal(odd.config!.global.sni, undefined);
    assert.equal(odd.diagnostics.filter((d) => d.severity === 'warning').length, 2);
  });

  it('validate prints where each came from, never a value; run serves on the overridden port and /config says so', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const file = join(dir, 'portico.yaml');
    writeFileSync(
      file,
      `global:\n  port: 1\n  wwwroot: ${dir}\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n    config: true\n`,
    );
    writeFileSync(join(dir, 'index.html'), 'from the environment');
    const env = {
      ...process.env,
      FERRON_PORT: `127.0.0.1:${port}`,
      PORTICO_ENV_VARS: 'SECRET_TOKEN',
      PORTICO_ENV_SECRET_TOKEN: 'hunter2',
    };
    const validated = await runCli(['validate', '-c', file], { env });
    assert.equal(validated.code, 0, validated.stderr);
    assert.match(validated.stdout, /^global\.port: set by FERRON_PORT$/m);
    assert.match(
      validated.stdout,
      /^global\.environmentVariables\.SECRET_TOKEN: set by PORTICO_ENV_SECRET_TOKEN$/m,
    );
    assert.doesNotMatch(validated.stdout + validated.stderr, /hunter2/);
    const serving = await runServing(file, { env });
    try {
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'from the environment');
      const text = await (await fetch(`http://127.0.0.1:${adminPort}/config`)).text();
      assert.doesNotMatch(text, /hunter2/);
      const shown = JSON.parse(text) as {
        global: { port: unknown };
        environment: Record<string, string>;
      };
      assert.equal(shown.global.port, `127.0.0.1:${port}`);
      assert.equal(shown.environment['global.port'], 'FERRON_PORT');
      assert.doesNotMatch(serving.output(), /hunter2/);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });
});
