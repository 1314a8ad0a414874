/**
 * Throwaway certificates for TLS tests and for embedding krill with TLS in a test suite:
 *
 *   const certs = createTestCertificates();              // a fresh temp dir
 *   const broker = await startBroker({ config: { listeners: 'SSL://127.0.0.1:0', ...certs.brokerSsl() } });
 *   // a client: ssl: { ca: certs.ca.cert, cert: certs.client.cert, key: certs.client.key }
 *   certs.cleanup();
 *
 * Made with the system `openssl` command (OpenSSL 1.1.1 or 3.x; it is on developers' machines and on
 * CI), so nothing of this runs in a broker: one test CA (CN=krill-test-ca), a broker certificate
 * (CN=localhost, subject alternative names DNS:localhost and IP:127.0.0.1, for server and client
 * use, so brokers can present it to each other) and a client certificate (CN=client,OU=test,O=krill,
 * an EC key). Each comes as a PEM key (PKCS#8) and certificate, a PEM key store file (key and chain
 * in one), an encrypted PEM key, and a PKCS12 key store; the CA also as a PEM and a PKCS12 trust
 * store. Every password is `password` (the returned one). Certificates are valid for ten years.
 *
 * Invariants: everything is written below `dir`, which cleanup() removes only if this call created
 * it; each call makes a new CA, so two calls give certificates that do not trust each other (the
 * test of an untrusted client). Fails with openssl's own message when the command is missing.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TestIdentity {
  /** PEM certificate (the leaf only). */
  readonly cert: string;
  /** PEM private key, PKCS#8, unencrypted. */
  readonly key: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The key encrypted with `password` (PKCS#8, AES-256). */
  readonly encryptedKey: string;
  readonly encryptedKeyFile: string;
  /** Key, certificate and CA certificate in one PEM file (ssl.keystore.type=PEM, ssl.keystore.location). */
  readonly pemKeystoreFile: string;
  /** PKCS12 key store with the key, its certificate and the CA certificate. */
  readonly pkcs12File: string;
  /** The subject as Kafka prints it (RFC 2253): the principal name under ssl.principal.mapping.rules=DEFAULT. */
  readonly distinguishedName: string;
}

export interface TestCertificates {
  readonly dir: string;
  readonly password: string;
  readonly ca: { readonly cert: string; readonly certFile: string; readonly pkcs12TruststoreFile: string };
  readonly broker: TestIdentity;
  readonly client: TestIdentity;
  /**
   * Kafka properties for TLS with these certificates, listener-prefixed when `listener` is given.
   * `format` picks the key and trust store type (default PEM files); `clientAuth` sets ssl.client.auth.
   */
  brokerSsl(opts?: { listener?: string; format?: 'PEM' | 'PKCS12' | 'PEM-inline'; clientAuth?: 'none' | 'requested' | 'required' }): Record<string, string>;
  /** Removes the directory if this call created it. */
  cleanup(): void;
}

const PASSWORD = 'password';
const DAYS = '3650';

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() || e.message}`);
  }
}

function identity(
  dir: string,
  name: string,
  subject: string,
  distinguishedName: string,
  keyArgs: string[],
  extensions: string,
): TestIdentity {
  const f = (suffix: string) => path.join(dir, `${name}${suffix}`);
  openssl(['genpkey', ...keyArgs, '-out', f('.key')], dir);
  openssl(['req', '-new', '-key', f('.key'), '-subj', subject, '-out', f('.csr')], dir);
  fs.writeFileSync(f('.ext'), extensions);
  const serial = '0x' + Buffer.from(Array.from({ length: 8 }, () => Math.floor(Math.random() * 256))).toString('hex');
  openssl(
    ['x509', '-req', '-in', f('.csr'), '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', serial, '-days', DAYS, '-sha256', '-extfile', f('.ext'), '-out', f('.pem')],
    dir,
  );
  openssl(['pkcs8', '-topk8', '-in', f('.key'), '-v2', 'aes-256-cbc', '-passout', `pass:${PASSWORD}`, '-out', f('.key.enc')], dir);
  openssl(
    ['pkcs12', '-export', '-in', f('.pem'), '-inkey', f('.key'), '-certfile', 'ca.pem', '-name', name, '-passout', `pass:${PASSWORD}`, '-out', f('.p12')],
    dir,
  );
  const cert = fs.readFileSync(f('.pem'), 'utf8');
  const key = fs.readFileSync(f('.key'), 'utf8');
  fs.writeFileSync(f('.keystore.pem'), key + cert + fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8'));
  for (const x of ['.csr', '.ext']) fs.rmSync(f(x));
  return {
    cert,
    key,
    certFile: f('.pem'),
    keyFile: f('.key'),
    encryptedKey: fs.readFileSync(f('.key.enc'), 'utf8'),
    encryptedKeyFile: f('.key.enc'),
    pemKeystoreFile: f('.keystore.pem'),
    pkcs12File: f('.p12'),
    distinguishedName,
  };
}

/** Makes a CA, a broker and a client certificate in `dir` (default: a new temp directory). */
export function createTestCertificates(dir?: string): TestCertificates {
  const own = dir === undefined;
  const root = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-certs-'));
  fs.mkdirSync(root, { recursive: true });
  try {
    const rsa = ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'];
    openssl(['genpkey', ...rsa, '-out', 'ca.key'], root);
    fs.writeFileSync(path.join(root, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n');
    openssl(['req', '-new', '-key', 'ca.key', '-subj', '/CN=krill-test-ca', '-out', 'ca.csr'], root);
    openssl(['x509', '-req', '-in', 'ca.csr', '-signkey', 'ca.key', '-days', DAYS, '-sha256', '-extfile', 'ca.ext', '-out', 'ca.pem'], root);
    fs.rmSync(path.join(root, 'ca.csr'));
    fs.rmSync(path.join(root, 'ca.ext'));
    openssl(['pkcs12', '-export', '-nokeys', '-in', 'ca.pem', '-passout', `pass:${PASSWORD}`, '-out', 'truststore.p12'], root);
    const leafUsage = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nauthorityKeyIdentifier=keyid\n';
    const broker = identity(
      root,
      'broker',
      '/CN=localhost',
      'CN=localhost',
      rsa,
      leafUsage + 'extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n',
    );
    const client = identity(
      root,
      'client',
      '/O=krill/OU=test/CN=client',
      'CN=client,OU=test,O=krill',
      ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nauthorityKeyIdentifier=keyid\nextendedKeyUsage=clientAuth\n',
    );
    const caFile = path.join(root, 'ca.pem');
    const ca = { cert: fs.readFileSync(caFile, 'utf8'), certFile: caFile, pkcs12TruststoreFile: path.join(root, 'truststore.p12') };
    return {
      dir: root,
      password: PASSWORD,
      ca,
      broker,
      client,
      brokerSsl(opts = {}) {
        const p = opts.listener ? `listener.name.${opts.listener.toLowerCase()}.` : '';
        const props: Record<string, string> = {};
        const format = opts.format ?? 'PEM';
        if (format === 'PKCS12') {
          Object.assign(props, {
            [`${p}ssl.keystore.type`]: 'PKCS12',
            [`${p}ssl.keystore.location`]: broker.pkcs12File,
            [`${p}ssl.keystore.password`]: PASSWORD,
            [`${p}ssl.truststore.type`]: 'PKCS12',
            [`${p}ssl.truststore.location`]: ca.pkcs12TruststoreFile,
            [`${p}ssl.truststore.password`]: PASSWORD,
          });
        } else if (format === 'PEM-inline') {
          Object.assign(props, {
            [`${p}ssl.keystore.type`]: 'PEM',
            [`${p}ssl.keystore.certificate.chain`]: broker.cert + ca.cert,
            [`${p}ssl.keystore.key`]: broker.encryptedKey,
            [`${p}ssl.key.password`]: PASSWORD,
            [`${p}ssl.truststore.type`]: 'PEM',
            [`${p}ssl.truststore.certificates`]: ca.cert,
          });
        } else {
          Object.assign(props, {
            [`${p}ssl.keystore.type`]: 'PEM',
            [`${p}ssl.keystore.location`]: broker.pemKeystoreFile,
            [`${p}ssl.truststore.type`]: 'PEM',
            [`${p}ssl.truststore.location`]: caFile,
          });
        }
        if (opts.clientAuth) props[`${p}ssl.client.auth`] = opts.clientAuth;
        return props;
      },
      cleanup() {
        if (own) fs.rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (own) fs.rmSync(root, { recursive: true, force: true });
    throw err;
  }
}
