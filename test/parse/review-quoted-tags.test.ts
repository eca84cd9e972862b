import { parseToolCalls } from '../../src/parse';
import { callsOf } from './parse-helpers';
import { writeFileApp } from './write-file-app';

/** A Qwen3-Coder call as its chat template writes it: each tag and value on lines of their own. */
function qwenCall(name: string, params: Record<string, string>): string {
  const body = Object.entries(params).map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${name}>\n${body}</function>\n</tool_call>`;
}

/** A GLM-4.5 call as its chat template writes it. */
function glmCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>\n`).join('');
  return `<tool_call>${name}\n${body}</tool_call>`;
}

/**
 * vLLM's newer `qwen3_coder` parser reads a `<parameter=key>` as a header only at a line's start:
 * one in the middle of a line of a value (code, documentation mentioning the tag) is its text.
 */
describe('a Qwen3-Coder value quoting <parameter=key> mid-line', () => {
  it('keeps it as text, closed or left open', () => {
    const py = 'TAG = "<parameter=path>"\nprint(f"write {TAG} then the path")';
    expect(callsOf(qwenCall('write_file', { path: 'tag.py', content: py }))).toEqual([['write_file', JSON.stringify({ path: 'tag.py', content: py })]]);
    const doc = 'Use <parameter=k> tags, one a line.';
    expect(callsOf(`<function=w>\n<parameter=content>\n${doc}\n</parameter>\n</function>`)).toEqual([['w', JSON.stringify({ content: doc })]]);
    expect(callsOf(`<function=w>\n<parameter=content>\n${doc}\n</function>`)).toEqual([['w', JSON.stringify({ content: doc })]]);
  });

  it('still ends a value left open at a header at a line start, or right after its own', () => {
    expect(callsOf('<function=a>\n<parameter=x>\n1\n<parameter=y>\ntwo\n</parameter>\n</function>')).toEqual([['a', '{"x":1,"y":"two"}']]);
    expect(callsOf('<function=a><parameter=x><parameter=y>2</parameter></function>')).toEqual([['a', '{"x":"","y":2}']]);
  });
});

/**
 * A value may quote a whole call (a file of examples being written): the outer call is the one,
 * the quoted call its text, as vLLM's parser reads it.
 */
describe('a value quoting a whole call', () => {
  const example = qwenCall('get_weather', { city: 'Paris' });
  const glmExample = glmCall('get_weather', { city: 'Paris' });

  it('is text of the Qwen3-Coder call around it', () => {
    const content = `An example call:\n${example}\nEnd.`;
    expect(parseToolCalls(qwenCall('write_file', { path: 'ex.md', content }))).toMatchObject({
      calls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'ex.md', content }) }],
      remainingText: '',
      format: 'qwen_xml',
    });
    expect(callsOf(qwenCall('write_file', { content: example, path: 'ex.md' }))).toEqual([['write_file', JSON.stringify({ content: example, path: 'ex.md' })]]);
  });

  it('is text of the GLM call around it', () => {
    const content = `An example call:\n${glmExample}\nEnd.`;
    expect(parseToolCalls(glmCall('write_file', { path: 'ex.md', content }))).toMatchObject({
      calls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'ex.md', content }) }],
      remainingText: '',
      format: 'glm_xml',
    });
  });

  it('is still a call after a draft cut off, and the calls after it too', () => {
    const cut = '<tool_call>\n<function=a>\n<parameter=x>\n1';
    const next = qwenCall('b', { y: '2' });
    expect(parseToolCalls(`${cut}\n${example}\n${next}`).calls.map((c) => c.name)).toEqual(['get_weather', 'b']);
    expect(parseToolCalls(`${cut}\n${example}\nIts value ends at </parameter>, the call at </function>.`).calls.map((c) => c.name)).toEqual(['get_weather']);
    const glmCut = '<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1\n';
    expect(parseToolCalls(`${glmCut}${glmExample}\n${glmCall('b', { y: '2' })}`).calls.map((c) => c.name)).toEqual(['get_weather', 'b']);
  });

  describe('through the ParseToolCalls RPC', () => {
    const app = writeFileApp();

    it('reaches the tool as written', async () => {
      const content = `Call it so:\n${example}\n`;
      const reply = await app.d().dispatch.parseToolCalls({ text: `Writing.\n${qwenCall('write_file', { path: 'ex.md', content })}`, offeredTools: ['write_file'] });
      expect(reply.remainingText).toBe('Writing.');
      expect(reply.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['write_file', { path: 'ex.md', content }]]);
    });
  });
});
