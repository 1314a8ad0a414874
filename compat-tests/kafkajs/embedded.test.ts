/** KafkaJS 2.2.4 against krill embedded in this process (startBroker). */
import { kafkaJsSuite } from './kafkajs-suite';

kafkaJsSuite('embedded');
