// The emulator as a node:test fixture: one per test file, closed after it, and every test
// fails when a request, response or webhook broke GitHub's description or rules during it.
import { after, afterEach } from 'node:test';
import { GitHubEmulator, type GitHubEmulatorOptions } from './emulator.js';

export async function startTestEmulator(options: GitHubEmulatorOptions = {}): Promise<GitHubEmulator> {
  const gh = await GitHubEmulator.start(options);
  afterEach(() => gh.assertNoViolations());
  after(() => gh.close());
  return gh;
}
