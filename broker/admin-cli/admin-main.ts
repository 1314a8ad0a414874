/**
 * The admin subcommands of the `krill` command, for machines without a JVM: `krill topics`,
 * `krill groups`, `krill configs`, `krill acls`, `krill quorum`, each following the Kafka tool it
 * is named after (kafka-topics.sh, kafka-consumer-groups.sh, kafka-configs.sh, kafka-acls.sh,
 * kafka-metadata-quorum.sh) and talking to any Kafka-compatible cluster over the protocol only;
 * and `krill storage` (kafka-storage.sh), which works on the local node's directories instead.
 *
 * Exit codes: 0 success, 1 a failure the tool reports (a ToolError or a refused request: one
 * line, no stack, as Kafka's tools print it), 2 bad usage (unknown option, missing action). Every
 * subcommand takes --command-config (command-config.ts). Refused SASL credentials print the
 * broker's message as each tool prints Kafka's SaslAuthenticationException.
 */
import { ClientError } from '../../client/network-client';
import { KafkaError } from '../../protocol/errors';
import { AuthenticationFailure, ToolError, UsageError } from './admin-connection';
import { topicsCommand } from './topics-command';
import { groupsCommand } from './groups-command';
import { configsCommand } from './configs-command';
import { aclsCommand } from './acls-command';
import { quorumCommand } from './quorum-command';
import { storageCommand } from './storage-command';
import { PROCESS_OUTPUT, type ToolOutput } from './tool-output';

type Command = (argv: readonly string[], out: ToolOutput) => Promise<number>;

/** Subcommand -> [implementation, the prefix of its error lines (Kafka's wording)]. */
const COMMANDS: Readonly<Record<string, [Command, string]>> = {
  topics: [topicsCommand, 'Error while executing topic command : '],
  groups: [groupsCommand, 'Error: '],
  configs: [configsCommand, 'Error while executing config command with args '],
  acls: [aclsCommand, 'Error while executing ACL command: '],
  quorum: [quorumCommand, 'Error while executing metadata quorum command: '],
  storage: [storageCommand, ''],
};

export function isAdminCommand(name: string | undefined): boolean {
  return name !== undefined && Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/** Runs `krill <command> ...argv`; resolves to the exit code. */
export async function adminMain(command: string, argv: readonly string[], out: ToolOutput = PROCESS_OUTPUT): Promise<number> {
  const [run, prefix] = COMMANDS[command];
  try {
    return await run(argv, out);
  } catch (err) {
    const usage = err instanceof UsageError || (err instanceof ToolError && /^(unknown option|unexpected argument|Command must include|.* needs a value|.* takes no value|.* given twice)/.test(err.message));
    if (err instanceof ToolError || err instanceof KafkaError || err instanceof ClientError) {
      const line =
        command === 'configs'
          ? `${prefix}'${argv.join(' ')}'\n${err.message}`
          : command === 'groups' && err instanceof AuthenticationFailure
            ? `${prefix}Executing consumer group command failed due to org.apache.kafka.common.errors.SaslAuthenticationException: ${err.message}`
            : `${prefix}${err.message}`;
      (command === 'topics' ? out.stdout : out.stderr).call(out, line);
      return usage ? 2 : 1;
    }
    throw err;
  }
}
