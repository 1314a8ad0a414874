import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { formatProperties, loadPropertiesFile, parseProperties, PropertiesParseError } from './properties';

const obj = (text: string) => Object.fromEntries(parseProperties(text));

describe('parseProperties', () => {
  test('separators: =, :, blank, and none', () => {
    expect(obj('a=1\nb: 2\nc 3\nd=\ne\nf\t=\t4\ng:=5\nh = =6\n')).toEqual({
      a: '1',
      b: '2',
      c: '3',
      d: '',
      e: '',
      f: '4',
      g: '=5',
      h: '=6',
    });
  });

  test('value keeps trailing blanks and inner separators, key ends at first separator', () => {
    expect(obj('k = v with = and : inside  \n')).toEqual({ k: 'v with = and : inside  ' });
    expect(obj('listeners=PLAINTEXT://:9092,SSL://host:9093')).toEqual({ listeners: 'PLAINTEXT://:9092,SSL://host:9093' });
  });

  test('comments with # and !, leading blanks, and blank lines', () => {
    expect(obj('# c1\n   ! c2\n\n \t\f\nk=v\n  #k2=v2\n')).toEqual({ k: 'v' });
  });

  test('a comment ending in a backslash does not continue', () => {
    expect(obj('# comment \\\nk=v')).toEqual({ k: 'v' });
  });

  test('continuation lines drop the backslash and the next line\'s leading blanks', () => {
    expect(obj('log.dirs=/a,\\\n    /b,\\\n\t/c\nx=1')).toEqual({ 'log.dirs': '/a,/b,/c', x: '1' });
  });

  test('a continuation line starting with # is value, not comment', () => {
    expect(obj('k=a\\\n  #b')).toEqual({ k: 'a#b' });
  });

  test('an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    expect(obj('k=a\\\\\nx=1')).toEqual({ k: 'a\\', x: '1' });
    expect(obj('k=a\\\\\\\nb')).toEqual({ k: 'a\\b' });
  });

  test('a blank continuation line ends the value; a trailing backslash at end of input is dropped', () => {
    expect(obj('k=a\\\n   \nx=1')).toEqual({ k: 'a', x: '1' });
    expect(obj('k=a\\')).toEqual({ k: 'a' });
  });

  test('continuation inside a key', () => {
    expect(obj('lo\\\n  ng.key=v')).toEqual({ 'long.key': 'v' });
  });

  test('escapes in keys and values', () => {
    expect(obj('a\\=b\\:c\\ d=x\\ty\\nz\\r\\f\\\\\\q')).toEqual({ 'a=b:c d': 'x\ty\nz\r\f\\q' });
    expect(obj('k=\\#not a comment')).toEqual({ k: '#not a comment' });
  });

  test('unicode escapes, including a surrogate pair', () => {
    expect(obj('k=\\u0041\\u00e9\\uD83D\\uDE00')).toEqual({ k: 'A\u00e9\u{1F600}' });
    expect(obj('\\u006b=v')).toEqual({ k: 'v' });
  });

  test('malformed unicode escape is an error naming the line', () => {
    expect(() => parseProperties('a=1\nk=\\u12G4')).toThrow(PropertiesParseError);
    expect(() => parseProperties('a=1\nk=\\u12G4')).toThrow(/Malformed \\uxxxx encoding.*line 2/);
    expect(() => parseProperties('k=\\u12')).toThrow(/Malformed/);
  });

  test('CRLF and CR line endings', () => {
    expect(obj('a=1\r\nb=2\rc=3\r\n')).toEqual({ a: '1', b: '2', c: '3' });
    expect(obj('a=x\\\r\n  y\r\nb=2')).toEqual({ a: 'xy', b: '2' });
  });

  test('the last value of a repeated key wins', () => {
    const m = parseProperties('a=1\nb=2\na=3');
    expect([...m.entries()]).toEqual([
      ['a', '3'],
      ['b', '2'],
    ]);
  });

  test('a UTF-8 byte order mark is ignored', () => {
    expect(obj('\ufeffnode.id=1')).toEqual({ 'node.id': '1' });
  });

  test("Kafka's shipped server.properties reads as Kafka reads it", () => {
    const text = [
      '# Licensed to the Apache Software Foundation (ASF)',
      '############################# Server Basics #############################',
      'process.roles=broker,controller',
      'node.id=1',
      'controller.quorum.bootstrap.servers=localhost:9093',
      'listeners=PLAINTEXT://:9092,CONTROLLER://:9093',
      'inter.broker.listener.name=PLAINTEXT',
      'advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
      'log.dirs=/tmp/kraft-combined-logs',
      '#log.retention.bytes=1073741824',
      'log.retention.hours=168',
    ].join('\n');
    const m = obj(text);
    expect(Object.keys(m)).toHaveLength(9);
    expect(m['listeners']).toBe('PLAINTEXT://:9092,CONTROLLER://:9093');
    expect(m['log.retention.bytes']).toBeUndefined();
  });
});

describe('formatProperties', () => {
  test('round-trips awkward keys and values', () => {
    const entries: [string, string][] = [
      ['plain', 'value'],
      ['key with spaces', ' leading and trailing '],
      ['k=:#!', 'v=:#!\\'],
      ['ctl', 'tab\tnl\ncr\rff\f\u0001'],
      ['uni', 'caf\u00e9 \u{1F600}'],
      ['empty', ''],
    ];
    expect([...parseProperties(formatProperties(entries)).entries()]).toEqual(entries);
  });
});

describe('loadPropertiesFile', () => {
  test('reads UTF-8 by default, ISO-8859-1 on request', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-props-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, 'log.dir=/data/caf\u00e9\n', 'utf8');
      expect(loadPropertiesFile(file).get('log.dir')).toBe('/data/caf\u00e9');
      expect(loadPropertiesFile(file, 'latin1').get('log.dir')).toBe('/data/caf\u00c3\u00a9');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
