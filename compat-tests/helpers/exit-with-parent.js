'use strict';
// Preloaded (node -r) into CLI brokers started by compat-tests/helpers/brokers.ts: the test
// process holds this child's stdin open, so stdin ending means the test process is gone (even
// killed with SIGKILL, when no cleanup of its own can run). The broker then exits at once instead
// of living on as an orphan holding a port and a temp dir.
process.stdin.on('end', () => process.exit(70));
process.stdin.on('error', () => process.exit(70));
process.stdin.resume();
