/** KafkaJS 2.2.4 against krill started as a separate process through the CLI (bin/krill.js). */
import { kafkaJsSuite } from './kafkajs-suite';

kafkaJsSuite('cli');
