// Every command answers `--help` (and `help <command>`) with its own text and exit code 0,
// starting nothing; an unknown topic is a usage error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli, type CliIo } from './cli.js';
import { asksForHelp } from './cli-help.js';

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) };
  // No settings in the environment: a command that ran instead of helping would fail on them.
  const code = await runCli(argv, {}, io);
  return { code, stdout, stderr };
}

const commands = ['run', 'synth', 'renderer', 'version', 'help', 'dev'];

describe('preview-operator help', () => {
  it('--help, -h and help: the commands, exit 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await cli(...argv);
      assert.equal(result.code, 0, argv.join(' '));
      assert.match(result.stdout, /^Usage: preview-operator <command>/);
      for (const command of ['run', 'synth', 'renderer', 'help', 'version']) assert.match(result.stdout, new RegExp(`^  ${command} `, 'm'));
    }
  });

  it("<command> --help, <command> -h and help <command>: that command's text, exit 0, nothing started", async () => {
    for (const command of commands) {
      const texts = new Set<string>();
      for (const argv of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
        [command, '--tls-issuer-kind=Vault', '--help'],
      ]) {
        const result = await cli(...argv);
        assert.equal(result.code, 0, `${argv.join(' ')}: ${result.stderr}`);
        assert.equal(result.stderr, '', argv.join(' '));
        texts.add(result.stdout);
      }
      assert.equal(texts.size, 1, `${command}: one text`);
      const [text] = texts;
      if (command !== 'dev') assert.match(text!, new RegExp(`^Usage: preview-operator ${command}\\b`));
    }
  });

  it("each command's own flags are in its text; run lists every setting", async () => {
    assert.match((await cli('synth', '--help')).stdout, /--repo <path>[\s\S]*--pr <n>[\s\S]*--sha <sha>[\s\S]*--repository owner\/name/);
    assert.match(
      (await cli('renderer', '--help')).stdout,
      /--checkout-root <dir>[\s\S]*--client-gid <gid>[\s\S]*--sandbox-renderer-socket/,
    );
    const run = (await cli('run', '--help')).stdout;
    assert.match(run, /--controllers=/);
    assert.match(run, /\| `--webhook-port` \| `[A-Z_]+` \|/);
    assert.equal((await cli('help', 'settings')).code, 0);
  });

  it('an unknown topic or command: exit 2 with the usage on stderr', async () => {
    const topic = await cli('help', 'nope');
    assert.equal(topic.code, 2);
    assert.match(topic.stderr, /no command or topic "nope"/);
    const command = await cli('nope', '--help');
    assert.equal(command.code, 2);
    assert.match(command.stderr, /unknown command "nope"/);
  });

  it('asks for help only with a word of its own before --', () => {
    assert.equal(asksForHelp(['--repo', 'x', '--help']), true);
    assert.equal(asksForHelp(['-h']), true);
    assert.equal(asksForHelp(['--helpful']), false);
    assert.equal(asksForHelp(['--', '--help']), false);
  });
});
