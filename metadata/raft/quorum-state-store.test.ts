/**
 * Tests of the quorum-state file: Kafka's JSON layout for both data versions, atomic replacement,
 * and clear errors for damaged or foreign files.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  FileQuorumStateStore,
  NO_DIRECTORY_ID,
  QuorumStateFileError,
  decodeQuorumState,
  electionState,
  encodeQuorumState,
} from './quorum-state-store';

describe('quorum-state file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-quorum-state-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes version 0 exactly as Kafka does, with data_version', () => {
    const store = FileQuorumStateStore.inDir(dir, { version: 0, voterIds: [1, 2, 3] });
    store.write(electionState(2, 1, -1));
    expect(fs.readFileSync(path.join(dir, 'quorum-state'), 'utf8')).toBe(
      '{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}',
    );
    expect(store.read()).toEqual(electionState(2, 1, -1));
    expect(fs.existsSync(path.join(dir, 'quorum-state.tmp'))).toBe(false);
  });

  it('writes and reads version 1 with the voted directory id', () => {
    const store = FileQuorumStateStore.inDir(dir, { version: 1 });
    store.write(electionState(5, -1, 3, 'J8aAPcfLQt2bqs1JT_rMgQ'));
    expect(JSON.parse(fs.readFileSync(store.file, 'utf8'))).toEqual({ leaderId: -1, leaderEpoch: 5, votedId: 3, votedDirectoryId: 'J8aAPcfLQt2bqs1JT_rMgQ', data_version: 1 });
    expect(store.read()).toEqual(electionState(5, -1, 3, 'J8aAPcfLQt2bqs1JT_rMgQ'));
  });

  it('reads a file Kafka wrote (version 0 with null voters)', () => {
    expect(decodeQuorumState('{"clusterId":"abc","leaderId":-1,"leaderEpoch":7,"votedId":2,"appliedOffset":0,"currentVoters":null,"data_version":0}\n')).toEqual(
      electionState(7, -1, 2, NO_DIRECTORY_ID),
    );
  });

  it('returns null when there is no file, and replaces an existing one', () => {
    const store = FileQuorumStateStore.inDir(dir);
    expect(store.read()).toBeNull();
    store.write(electionState(1, -1, 1));
    store.write(electionState(2, 3, -1));
    expect(store.read()).toEqual(electionState(2, 3, -1));
    store.clear();
    expect(store.read()).toBeNull();
  });

  it.each([
    ['', /File ended prematurely/],
    ['{"leaderId":1', /invalid JSON/],
    ['[1,2]', /is not an object node/],
    ['{"leaderId":1,"leaderEpoch":2,"votedId":-1}', /does not have data_version field/],
    ['{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":2}', /data_version \(2\) is not within the min \(0\) and max \(1\) supported version/],
    ['{"leaderId":"1","leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}', /field leaderId/],
    ['{"leaderId":1,"leaderEpoch":2,"votedId":-1,"data_version":1}', /votedDirectoryId/],
    ['{"leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[],"data_version":0}', /clusterId/],
    ['{"leaderId":1,"leaderEpoch":-1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}', /leaderEpoch -1/],
  ])('rejects a damaged file %s', (text, msg) => {
    const file = path.join(dir, 'quorum-state');
    fs.writeFileSync(file, text);
    const read = () => FileQuorumStateStore.inDir(dir).read();
    expect(read).toThrow(QuorumStateFileError);
    expect(read).toThrow(msg);
    expect(read).toThrow(`Error while reading the Quorum status from the file ${file}`);
  });

  it('encodes no unsupported version', () => {
    expect(() => encodeQuorumState(electionState(1), 2)).toThrow(/greater than the supported version/);
  });
});
