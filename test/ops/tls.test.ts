/**
 * HTTPS served by the service itself (TLS_CERT, TLS_KEY): TLS 1.2 and 1.3 clients connect with an AES-GCM suite;
 * TLS 1.0 and 1.1 clients, and TLS 1.2 clients offering only CBC or ChaCha20 suites, are refused by the server. A
 * control server that allows TLS 1.0 shows the same low-version client can connect, so the refusals are the
 * service's. The certificates are generated here with openssl.
 */
import { t } from '../helpers/file-test.ts'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, createServer as createTlsServer, type ConnectionOptions, type TLSSocket } from 'node:tls'
import type { AddressInfo } from 'node:net'
import { request } from 'node:https'
import { ConfigError, loadConfig } from '../../runtime/platform/config.ts'
import { startTestService } from '../helpers/service.ts'

const dir = mkdtempSync(join(tmpdir(), 'orgscan-tls-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const files = { ecCert: join(dir, 'ec.crt'), ecKey: join(dir, 'ec.key'), rsaCert: join(dir, 'rsa.crt'), rsaKey: join(dir, 'rsa.key') }
const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-days', '1', '-nodes']
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-keyout', files.ecKey, '-out', files.ecCert, ...subject], { stdio: 'ignore' })
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-keyout', files.rsaKey, '-out', files.rsaCert, ...subject], { stdio: 'ignore' })

t.test('TLS_CERT and TLS_KEY go together and must be readable', async (t) => {
  t.throws(() => loadConfig({ TLS_CERT: files.ecCert }), ConfigError)
  t.throws(() => loadConfig({ TLS_KEY: files.ecKey }), /TLS_CERT and TLS_KEY go together/)
  t.throws(() => loadConfig({ TLS_CERT: join(dir, 'missing.crt'), TLS_KEY: files.ecKey }), /TLS_CERT: cannot read .*missing\.crt \(ENOENT\)/)
  t.ok(loadConfig({ TLS_CERT: files.ecCert, TLS_KEY: files.ecKey }).tls)
  t.throws(() => loadConfig({ TLS_CERT: files.ecCert, TLS_KEY: files.rsaKey }), /TLS_KEY is not the private key of the certificate/, 'a key of another certificate')
  t.throws(() => loadConfig({ TLS_CERT: files.ecKey, TLS_KEY: files.ecKey }), /must be a PEM certificate/, 'not a certificate')
})

/** Connects with `opts`; resolves with the negotiated protocol and cipher, or the error. */
function handshake(port: number, ca: string, opts: ConnectionOptions): Promise<{ protocol: string | null; cipher: string } | { error: string }> {
  return new Promise((resolve) => {
    const s: TLSSocket = connect({ host: '127.0.0.1', port, ca: execFileSync('cat', [ca]), servername: 'localhost', ...opts }, () => {
      resolve({ protocol: s.getProtocol(), cipher: s.getCipher().name })
      s.end()
    })
    s.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }))
  })
}

for (const kind of ['ec', 'rsa'] as const) {
  t.test(`an ${kind.toUpperCase()} certificate: versions and suites`, async (t) => {
    const cert = kind === 'ec' ? files.ecCert : files.rsaCert
    const key = kind === 'ec' ? files.ecKey : files.rsaKey
    const ts = await startTestService(t, { seed: false, config: { tls: { cert: execFileSync('cat', [cert]), key: execFileSync('cat', [key]) } } })
    t.match(ts.svc.url, /^https:\/\/127\.0\.0\.1:\d+$/, 'the service reports an https URL')
    t.match(ts.svc.mcpUrl, /^https:/)
    const port = ts.svc.port
    for (const version of ['TLSv1.3', 'TLSv1.2'] as const) {
      const r = await handshake(port, cert, { minVersion: version, maxVersion: version })
      t.match(r, { protocol: version, cipher: /GCM/ }, `${version} connects with an AES-GCM suite`)
    }
    for (const version of ['TLSv1', 'TLSv1.1'] as const) {
      const r = await handshake(port, cert, { minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' })
      t.match(r, { error: /alert protocol version|unsupported protocol|wrong version/i }, `${version} is refused`)
    }
    const cbc = await handshake(port, cert, { maxVersion: 'TLSv1.2', ciphers: kind === 'ec' ? 'ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384' : 'ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA384' })
    t.match(cbc, { error: /handshake failure|no shared cipher/i }, 'a TLS 1.2 client offering only CBC suites is refused')
    const chacha = await handshake(port, cert, { maxVersion: 'TLSv1.2', ciphers: kind === 'ec' ? 'ECDHE-ECDSA-CHACHA20-POLY1305' : 'ECDHE-RSA-CHACHA20-POLY1305' })
    t.match(chacha, { error: /handshake failure|no shared cipher/i }, 'and one offering only ChaCha20')
    const chacha13 = await handshake(port, cert, { minVersion: 'TLSv1.3', ciphers: 'TLS_CHACHA20_POLY1305_SHA256' })
    t.match(chacha13, { error: /handshake failure|no shared cipher/i }, 'TLS 1.3 with only ChaCha20 too')
    const x25519 = await handshake(port, cert, { ecdhCurve: 'X25519' })
    t.match(x25519, { error: /handshake failure|no shared|unsupported/i }, 'a client offering only X25519 key exchange is refused (not FIPS-approved)')
    const p256 = await handshake(port, cert, { ecdhCurve: 'P-256' })
    t.match(p256, { protocol: 'TLSv1.3' }, 'P-256 key exchange works')
    const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      request(`${ts.svc.url}/`, { ca: execFileSync('cat', [cert]) }, (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode!, text }))
      }).on('error', reject).end()
    })
    t.equal(body.status, 200, 'GET / over HTTPS')
    t.match(JSON.parse(body.text), { versions: Array })
  })
}

t.test('control: the same low-version client connects to a server that allows TLS 1.0', async (t) => {
  const server = createTlsServer({ cert: execFileSync('cat', [files.rsaCert]), key: execFileSync('cat', [files.rsaKey]), minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }, (s) => s.end())
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const r = await handshake((server.address() as AddressInfo).port, files.rsaCert, { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' })
  t.match(r, { protocol: 'TLSv1' }, 'so the refusals above are the service\'s')
})
