// The KDL mapping of CONTRACT.md, read into the same model as YAML.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { configToPlain } from '../../src/config/shape.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';

const CONTRACT_EXAMPLE = `global {
    port 8080
    sport 8443
    loadModules "cache" "rproxy"
    blocklist "203.0.113.7" "198.51.100.0/24"
    customHeaders { X-Frame-Options "DENY"; Link "<{path}>; rel=canonical" }
    admin {
        listen "127.0.0.1:8081"
        health true
        status true
        auth_token "{{env.PORTICO_ADMIN_TOKEN}}"
    }
}
host domain="example.com" {
    wwwroot "/var/www/example"
    rewriteMap regex="^/old/(.*)" replacement="/new/$1" last=true
    users name="alice" pass="$argon2id$v=19$m=19456,t=2,p=1$..."
    nonStandardCodes scode=401 url="/private" realm="Private area"
    location "/api" {
        proxyTo "http://127.0.0.1:3000" "http://127.0.0.1:3001"
    }
    errorConfig scode=404 {
        wwwroot "/var/www/errors"
    }
}
include "conf.d/*.kdl"
`;

function load(text: string, env: NodeJS.ProcessEnv = {}) {
  const result = loadConfigText(text, 'kdl', 'test.kdl', { properties: PROPERTY_TABLE, env });
  const errors = result.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
  return { ...result, errors, plain: result.config && configToPlain(result.config) };
}

describe('KDL front end', () => {
  it("reads CONTRACT.md's example into the model", () => {
    const { plain, errors } = load(CONTRACT_EXAMPLE, { PORTICO_ADMIN_TOKEN: 'tok' });
    assert.deepEqual(errors, []);
    assert.deepEqual(plain, {
      global: {
        port: 8080,
        sport: 8443,
        loadModules: ['cache', 'rproxy'],
        blocklist: ['203.0.113.7', '198.51.100.0/24'],
        customHeaders: { 'X-Frame-Options': 'DENY', Link: '<{path}>; rel=canonical' },
        admin: { listen: '127.0.0.1:8081', health: true, status: true, auth_token: 'tok' },
      },
      hosts: [
        {
          domain: 'example.com',
          wwwroot: '/var/www/example',
          rewriteMap: [{ regex: '^/old/(.*)', replacement: '/new/$1', last: true }],
          users: [{ name: 'alice', pass: '$argon2id$v=19$m=19456,t=2,p=1$...' }],
          nonStandardCodes: [{ scode: 401, url: '/private', realm: 'Private area' }],
          locations: [
            { path: '/api', proxyTo: ['http://127.0.0.1:3000', 'http://127.0.0.1:3001'] },
          ],
          errorConfig: [{ scode: 404, wwwroot: '/var/www/errors' }],
        },
      ],
    });
  });

  it('keeps true positions when it closes KDL 1.0 blocks without a final terminator', () => {
    const { diagnostics } = load(
      'global { port 8080; sport 99999 }\nhost domain="a.example" { wwwroot "/a"; bogus 1 }\n',
    );
    assert.deepEqual(diagnostics.map(formatDiagnostic), [
      'test.kdl:1:27: global.sport: 99999 is out of range for a port (1–65535)',
      'test.kdl:2:41: warning: hosts[0].bogus: unknown property, ignored',
    ]);
  });

  it('reads a bare boolean node as true, and null as null', () => {
    const { plain, errors } = load(
      'global {\n  enableDirectoryListing\n  timeout null\n  admin { health; status; config false }\n}\n',
    );
    assert.deepEqual(errors, []);
    assert.equal(plain?.global.enableDirectoryListing, true);
    assert.equal(plain?.global.timeout, null);
    assert.deepEqual(plain?.global.admin, { health: true, status: true, config: false });
  });

  it('reads KDL 2.0 syntax too', () => {
    const { plain, errors } = load(
      'global {\n  secure #false\n  timeout #null\n  loadModules cache\n}\n',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(plain?.global, { secure: false, timeout: null, loadModules: ['cache'] });
  });

  it('gathers repeated list nodes and reads maps of objects and nullable lists', () => {
    const { plain, errors } = load(`global {
  loadModules "cgi"
  blocklist "192.0.2.1"
  blocklist "192.0.2.2" "2001:db8::/32"
  sni { "*.example.com" cert="/c" key="/k"; "example.org" { cert "/c2"; key "/k2"; } }
  cgiScriptInterpreters { ".php" "/usr/bin/php-cgi" "-c" "/etc/php.ini"; ".sh" null; ".py" "/usr/bin/python3" }
  environmentVariables { LANG "C.UTF-8" }
}
`);
    assert.deepEqual(errors, []);
    assert.deepEqual(plain?.global, {
      loadModules: ['cgi'],
      blocklist: ['192.0.2.1', '192.0.2.2', '2001:db8::/32'],
      sni: {
        '*.example.com': { cert: '/c', key: '/k' },
        'example.org': { cert: '/c2', key: '/k2' },
      },
      cgiScriptInterpreters: {
        '.php': ['/usr/bin/php-cgi', '-c', '/etc/php.ini'],
        '.sh': null,
        '.py': ['/usr/bin/python3'],
      },
      environmentVariables: { LANG: 'C.UTF-8' },
    });
  });

  it('explains misplaced blocks and misused nodes', () => {
    const { errors } = load(`global {
  location "/x" { }
  secure true false
  customHeaders "X"
}
host "example.com" {
  location "/a" "/b" { }
  errorConfig 404 { }
}
unknown { }
`);
    assert.deepEqual(errors, [
      'test.kdl:2:3: global.location: location blocks belong directly inside a host',
      'test.kdl:3:10: global.secure: expected a boolean, got a list',
      'test.kdl:4:3: global.customHeaders: customHeaders takes children { … }, not arguments',
      'test.kdl:6:1: hosts[0]: write host domain="example.com" (a property), not an argument',
      'test.kdl:7:17: hosts[0].locations[0]: write location "/path" { … } with exactly one path',
      'test.kdl:8:3: hosts[0].errorConfig[0]: write errorConfig scode=404 { … }',
    ]);
  });

  it('reports syntax errors with their position', () => {
    const { errors } = load('global {\n  port 8080\n  sport "unterminated\n}\n');
    assert.equal(errors.length > 0, true);
    assert.match(errors[0]!, /^test\.kdl:\d+:\d+: KDL syntax: /);
  });
});
