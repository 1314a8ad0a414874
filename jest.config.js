/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/protocol', '<rootDir>/broker', '<rootDir>/storage', '<rootDir>/replication', '<rootDir>/compat-tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 60000,
  // Two cores: one worker for the test files plus the brokers they start.
  maxWorkers: 2,
};
