/**
 * Certificate subjects in Java's X500Principal.getName() form. The expected strings were printed by
 * Java 17 for the same certificates (openssl makes them here with the same subjects): reversed RDN
 * order, multi-valued RDNs, escapes, leading/trailing spaces, OID-and-hex attributes, UTF-8.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { subjectDistinguishedName } from './distinguished-name';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-dn-'));
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'k.pem'], { cwd: dir, stdio: 'ignore' });
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function selfSigned(subject: string): Buffer {
  execFileSync('openssl', ['req', '-new', '-x509', '-key', 'k.pem', '-utf8', '-multivalue-rdn', '-subj', subject, '-days', '1', '-out', 'c.pem'], {
    cwd: dir,
    stdio: 'ignore',
  });
  return new X509Certificate(fs.readFileSync(path.join(dir, 'c.pem'))).raw;
}

test.each([
  ['/O=krill/OU=test/CN=client', 'CN=client,OU=test,O=krill'],
  ['/CN=localhost', 'CN=localhost'],
  [
    '/DC=org/DC=example/O=Acme\\, Inc./OU=b+OU=a/CN= lead#ing=x;y<z>"q" /emailAddress=x@y.z/serialNumber=42/UID=u1/C=US/ST=Ünïcode',
    'ST=Ünïcode,C=US,UID=u1,2.5.4.5=#13023432,1.2.840.113549.1.9.1=#16057840792e7a,CN=\\ lead\\#ing\\=x\\;y\\<z\\>\\"q\\"\\ ,OU=a+OU=b,O=Acme\\, Inc.,DC=example,DC=org',
  ],
  ['/CN=a\\+b\\\\c/L=Zürich/street=1 Main St', 'STREET=1 Main St,L=Zürich,CN=a\\+b\\\\c'],
])('subject %s is %s', (subject, expected) => {
  expect(subjectDistinguishedName(selfSigned(subject))).toBe(expected);
});

test('bytes that are not a certificate are refused', () => {
  expect(() => subjectDistinguishedName(Buffer.from([0x30, 0x82, 0xff]))).toThrow();
  expect(() => subjectDistinguishedName(Buffer.from('not der'))).toThrow();
});
