// Validation problems found in review: each test names the defect it keeps fixed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText, type Syntax } from '../../src/config/load.js';
import { redactCredentials, redactScope } from '../../src/config/redact.js';
import { editDistance, suggest } from '../../src/config/suggest.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { configChecks } from '../../src/server/config-checks.js';
import { cpuClock } from '../helpers/cpu.js';

function diagnosticsOf(text: string, syntax: Syntax = 'yaml'): string[] {
  const file = syntax === 'kdl' ? 'portico.kdl' : 'portico.yaml';
  return loadConfigText(text, syntax, file, {
    properties: PROPERTY_TABLE,
    checks: configChecks(),
  }).diagnostics.map(formatDiagnostic);
}

function errorsOf(text: string, syntax: Syntax = 'yaml'): string[] {
  const file = syntax === 'kdl' ? 'portico.kdl' : 'portico.yaml';
  return loadConfigText(text, syntax, file, { properties: PROPERTY_TABLE, checks: configChecks() })
    .diagnostics.filter((d) => d.severity === 'error')
    .map(formatDiagnostic);
}

describe('an unknown name far from every candidate', () => {
  it('is reported at once, and its message does not repeat a megabyte', () => {
    const cpu = cpuClock();
    const kdl = diagnosticsOf(`global {\n    ${'a'.repeat(1e6)} 1\n}\n`, 'kdl');
    assert.ok(cpu() < 3000, 'took too long');
    assert.equal(kdl.length, 1);
    assert.ok(kdl[0]!.length < 300);
    const yaml = diagnosticsOf(`global: {"${'a'.repeat(1e6)}": 1}\n`);
    assert.deepEqual(yaml, [
      `portico.yaml:1:10: warning: global.${'a'.repeat(80)}…: unknown property, ignored`,
    ]);
  });

  it('still gets a suggestion when it is a typo', () => {
    assert.deepEqual(diagnosticsOf('global:\n  loadModule: [cache]\n'), [
      'portico.yaml:2:3: warning: global.loadModule: unknown property, ignored; did you mean "loadModules"?',
    ]);
    assert.equal(suggest('enableHttp2', ['enableHTTP2', 'enableHTTP3']), 'enableHTTP2');
    assert.equal(suggest('prxyTo', ['proxyTo', 'authTo']), 'proxyTo');
    assert.equal(suggest('x'.repeat(65), ['x'.repeat(64)]), undefined);
  });

  it('stops measuring once the limit is passed', () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('ab', 'ba'), 1);
    assert.equal(editDistance('kitten', 'sitting', 1), 2);
    assert.equal(editDistance('a'.repeat(1000), 'b', 2), 3);
  });
});

describe('every independent error in one run', () => {
  it('reads certificate files even when something else is wrong', () => {
    const errors = errorsOf(
      'global:\n  secure: true\n  cert: /nonexistent.crt\n  key: /nonexistent.key\n  port: 70000\n',
    );
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.match(errors.join('\n'), /global\.port: 70000 is out of range/);
    assert.match(
      errors.join('\n'),
      /cannot read the certificate \/nonexistent\.crt: no such file or directory \(ENOENT\)/,
    );
    assert.match(
      errors.join('\n'),
      /cannot read the private key.*: no such file or directory \(ENOENT\)/,
    );
  });

  it('checks the value under a wrong name, and the other names', () => {
    const errors = errorsOf(
      'global:\n  secure: true\n  sni:\n    "bad name!":\n      cert: /x\n    good.example:\n      cert: /nonexistent.crt\n      key: /nonexistent.key\n',
    );
    assert.match(errors.join('\n'), /global\.sni\.bad name!: expected a host name/);
    assert.match(errors.join('\n'), /global\.sni\.bad name!: SNI certificate needs "key"/);
    assert.match(
      errors.join('\n'),
      /cannot read the certificate \/nonexistent\.crt: no such file or directory \(ENOENT\)/,
    );
  });
});

describe('a u64 past 2^53−1', () => {
  it('is refused by naming the supported maximum', () => {
    assert.deepEqual(
      errorsOf(
        'global:\n  loadModules: [cache]\n  maximumCacheResponseSize: 18446744073709551615\n',
      ),
      [
        'portico.yaml:3:29: global.maximumCacheResponseSize: 18446744073709551615 is too large: the supported maximum is 9007199254740991 (2^53−1, the largest whole number held exactly)',
      ],
    );
  });
});

describe('where an error is reported', () => {
  it('names a lone proxyTo value by the property, without an index the user never wrote', () => {
    assert.deepEqual(
      errorsOf(
        'global:\n  loadModules: [rproxy]\nhosts:\n  - domain: example.com\n    proxyTo: localhost:3000\n',
      ),
      [
        'portico.yaml:5:14: hosts[0].proxyTo: expected an http://, https:// or h2c:// URL or a Unix socket (unix:/path/app.sock, http+unix://%2Fpath%2Fapp.sock, h2c+unix://…), got "localhost:3000"',
      ],
    );
    assert.deepEqual(
      errorsOf('global:\n  loadModules: [rproxy]\n  proxyTo: [http://a, localhost:3000]\n'),
      [
        'portico.yaml:3:23: global.proxyTo[1]: expected an http://, https:// or h2c:// URL or a Unix socket (unix:/path/app.sock, http+unix://%2Fpath%2Fapp.sock, h2c+unix://…), got "localhost:3000"',
      ],
    );
  });

  it('puts an SNI certificate error on the entry line that names the file', () => {
    const errors = errorsOf(
      'global:\n  secure: true\n  sni:\n    example.com:\n      cert: /nonexistent.crt\n      key: /nonexistent.key\n',
    );
    // An sni entry is a certificate: secure needs no global cert beside it.
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.equal(
      errors[0],
      'portico.yaml:5:7: global.sni.example.com.cert: cannot read the certificate /nonexistent.crt: no such file or directory (ENOENT)',
    );
    assert.match(
      errors[1]!,
      /^portico\.yaml:6:7: global\.sni\.example\.com\.key: cannot read the private key/,
    );
  });
});

describe('a header value a response cannot carry', () => {
  it('is refused for the character that is in the way', () => {
    assert.deepEqual(errorsOf('global:\n  customHeaders:\n    X-Uni: "héllo ☃"\n'), [
      'portico.yaml:3:12: global.customHeaders.X-Uni: invalid header value "héllo ☃": a header carries visible ASCII and Latin-1 characters only (up to U+00FF), not "☃" (U+2603); percent-encode it',
    ]);
    assert.deepEqual(errorsOf('global:\n  customHeaders:\n    X-Ctl: "a\\u0007b"\n'), [
      'portico.yaml:3:12: global.customHeaders.X-Ctl: invalid header value "a\\u0007b" (control characters are not allowed)',
    ]);
    assert.deepEqual(errorsOf('global:\n  customHeaders:\n    X-Latin: "héllo"\n'), []);
  });
});

describe('/config redaction of URL credentials', () => {
  it('redacts the whole userinfo, up to the last @ of the authority', () => {
    const hosts = [
      {
        domain: 'example.com',
        proxyTo: [
          'http://user:p@ss@127.0.0.1:3000',
          'http://127.0.0.1:3001/a@b',
          'http://u:pw@h/x?q=a@b#c@d',
        ],
      },
    ];
    assert.deepEqual(redactScope(hosts[0]!, PROPERTY_TABLE).proxyTo, [
      'http://[redacted]@127.0.0.1:3000',
      'http://127.0.0.1:3001/a@b',
      'http://[redacted]@h/x?q=a@b#c@d',
    ]);
    assert.equal(redactCredentials('unix://fc:fc@pw@/run/x.sock'), 'unix://[redacted]@/run/x.sock');
  });
});

describe('sensitive values in messages', () => {
  it('never shows the value of a property marked sensitive', () => {
    const errors = errorsOf(
      [
        'global:',
        '  loadModules: [fcgi]',
        '  key: 13572468',
        '  admin:',
        '    auth_token: 987654321',
        '  customHeaders:',
        '    Cookie: "sess=s3cr3t\\u0007"',
        '    Authorization: 24681357',
        '  users:',
        '    - name: alice',
        '      pass: 11223344',
        '  sni:',
        '    example.com:',
        '      cert: /nonexistent.crt',
        '      key: [99887766]',
        '  fcgiTo: "unix://fc:fcpw@/run/x.sock"',
        '',
      ].join('\n'),
    );
    const text = errors.join('\n');
    for (const secret of [
      '13572468',
      '987654321',
      's3cr3t',
      '24681357',
      '11223344',
      '99887766',
      'fcpw',
    ])
      assert.ok(!text.includes(secret), `${secret} shown:\n${text}`);
    assert.match(text, /global\.key: expected a string, got a number/);
    assert.match(text, /global\.admin\.auth_token: expected a string, got a number/);
    assert.match(
      text,
      /global\.customHeaders\.Cookie: invalid header value \[redacted\] \(control characters are not allowed\)/,
    );
    assert.match(text, /global\.users\[0\]\.pass: expected a string, got a number/);
    assert.match(text, /global\.fcgiTo: expected .*, got "unix:\/\/\[redacted\]@\/run\/x\.sock"/);
  });

  it('names the private key file in certificate messages (only /config hides it)', () => {
    const errors = errorsOf(
      'global:\n  secure: true\n  cert: /nonexistent.crt\n  key: /secret-place/server.key\n',
    );
    assert.deepEqual(errors, [
      'portico.yaml:3:3: global.cert: cannot read the certificate /nonexistent.crt: no such file or directory (ENOENT)',
      'portico.yaml:4:3: global.key: cannot read the private key /secret-place/server.key: no such file or directory (ENOENT)',
    ]);
  });
});

describe('the admin listener on a port alone', () => {
  it('is loopback, so there is no warning', () => {
    const warnings = (text: string) =>
      loadConfigText(text, 'kdl', 'portico.kdl', { properties: PROPERTY_TABLE })
        .diagnostics.filter((d) => d.severity === 'warning')
        .map(formatDiagnostic);
    assert.deepEqual(warnings('global {\n    admin {\n        listen "19905"\n    }\n}\n'), []);
    assert.deepEqual(
      warnings('global {\n    admin {\n        listen "0.0.0.0:19905"\n    }\n}\n'),
      [
        'portico.kdl:3:16: warning: global.admin.listen: the admin API has the power of a root shell; "0.0.0.0:19905" is not a loopback address',
      ],
    );
  });
});

describe('custom headers that would break responses', () => {
  it('refuses connection-specific headers and Content-Length, in any case', () => {
    const names = [
      'Connection',
      'keep-alive',
      'Upgrade',
      'Transfer-Encoding',
      'Proxy-Connection',
      'TE',
      'HTTP2-Settings',
      'Content-Length',
    ];
    const text = `global:\n  customHeaders:\n${names.map((n) => `    ${n}: x\n`).join('')}    X-Fine: yes\n`;
    const errors = errorsOf(text);
    assert.equal(errors.length, names.length, errors.join('\n'));
    assert.equal(
      errors[0],
      'portico.yaml:3:5: global.customHeaders.Connection: "Connection" is not allowed here: it is connection-specific (HTTP/2 forbids it in every response; the server manages connections itself)',
    );
    assert.equal(
      errors[7],
      'portico.yaml:10:5: global.customHeaders.Content-Length: "Content-Length" is not allowed here: the server sets it from each body, so a fixed value would contradict it',
    );
    assert.deepEqual(
      errorsOf(
        'hosts:\n  - domain: example.com\n    locations:\n      - path: /a\n        customHeaders: {upgrade: websocket}\n',
      ),
      [
        'portico.yaml:5:25: hosts[0].locations[0].customHeaders.upgrade: "upgrade" is not allowed here: it is connection-specific (HTTP/2 forbids it in every response; the server manages connections itself)',
      ],
    );
  });
});

describe('nonStandardCodes status codes', () => {
  it('refuses an informational 1xx, which cannot end a response', () => {
    const entries = [100, 101, 199]
      .map((c) => `      - scode: ${c}\n        url: /x${c}\n`)
      .join('');
    assert.deepEqual(
      errorsOf(`hosts:\n  - domain: example.com\n    nonStandardCodes:\n${entries}`),
      [
        'portico.yaml:4:16: hosts[0].nonStandardCodes[0].scode: 100 is too small: a 1xx status is informational and cannot end a response (the smallest allowed is 200)',
        'portico.yaml:6:16: hosts[0].nonStandardCodes[1].scode: 101 is too small: a 1xx status is informational and cannot end a response (the smallest allowed is 200)',
        'portico.yaml:8:16: hosts[0].nonStandardCodes[2].scode: 199 is too small: a 1xx status is informational and cannot end a response (the smallest allowed is 200)',
      ],
    );
    assert.deepEqual(
      errorsOf('host domain="example.com" {\n    nonStandardCodes scode=101 url="/ws"\n}\n', 'kdl')
        .length,
      1,
    );
  });

  it('keeps 204 and 304, which Ferron accepts like any other code', () => {
    assert.deepEqual(
      errorsOf(
        'hosts:\n  - domain: example.com\n    nonStandardCodes:\n      - scode: 204\n        url: /favicon.ico\n      - scode: 304\n        url: /cached\n',
      ),
      [],
    );
  });
});

describe('YAML admin directives without a value', () => {
  const admin = (text: string) => {
    const result = loadConfigText(text, 'yaml', 'portico.yaml', { properties: PROPERTY_TABLE });
    assert.deepEqual(result.diagnostics.map(formatDiagnostic), []);
    return result.config?.global.admin;
  };

  it('read a bare admin block as the secure default profile', () => {
    assert.deepEqual(admin('global:\n  admin:\n'), {});
  });

  it('read a bare endpoint directive as true', () => {
    assert.deepEqual(admin('global:\n  admin:\n    health:\n    status:\n    config: false\n'), {
      health: true,
      status: true,
      config: false,
    });
  });

  it('widen nothing else', () => {
    assert.deepEqual(errorsOf('global:\n  secure:\n  http2Settings:\n  admin:\n    listen:\n'), [
      'portico.yaml:2:10: global.secure: expected a boolean, got null',
      'portico.yaml:3:17: global.http2Settings: expected a mapping, got null',
      'portico.yaml:5:12: global.admin.listen: expected a port (1–65535) or a string, got null',
    ]);
  });
});
