/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/common', '<rootDir>/protocol', '<rootDir>/storage', '<rootDir>/config', '<rootDir>/client', '<rootDir>/metadata', '<rootDir>/replication', '<rootDir>/coordinator', '<rootDir>/broker', '<rootDir>/compat-tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 60000,
  // Two cores: one worker for the test files plus the brokers they start.
  maxWorkers: 2,
};
