import { parseToolCalls } from '../../src/parse';
import { argsOf, callsOf, expectNoCalls } from './parse-helpers';

// A model writing code in a pythonic call uses Python's own strings: before, a triple-quoted,
// raw or joined string, or a tuple, made the whole list no call (format none), where vLLM's and
// SGLang's pythonic parsers (Python's `ast`) read it.

describe('Python literals in pythonic calls', () => {
  it('reads triple-quoted strings, their line breaks and quotes kept, their escapes decoded', () => {
    const text = '[run_python(code="""import os\nprint("it\'s", \'x\')\nprint(\'\\t\')""")]';
    expect(argsOf(text)).toEqual({ code: 'import os\nprint("it\'s", \'x\')\nprint(\'\t\')' });
    expect(argsOf("[f(a='''say \"\"\"hi\"\"\"''')]")).toEqual({ a: 'say """hi"""' });
    expect(argsOf('[f(a="""x\\"""y""")]')).toEqual({ a: 'x"""y' });
    expect(argsOf('[f(a="""""")]')).toEqual({ a: '' });
  });

  it('keeps the backslashes of raw strings, and reads u strings', () => {
    expect(argsOf("[grep(pattern=r'\\d+\\.\\d+', path=R\"C:\\new\")]")).toEqual({ pattern: '\\d+\\.\\d+', path: 'C:\\new' });
    expect(argsOf('[f(a=r"""\\n""", b=u"é")]')).toEqual({ a: '\\n', b: 'é' });
    expect(argsOf('[f(a=r"say \\"x\\"")]')).toEqual({ a: 'say \\"x\\"' });
  });

  it('joins adjacent strings, as Python does, across line breaks inside the call', () => {
    expect(argsOf('[f(a="ab" \'cd\' r"\\e", b=1)]')).toEqual({ a: 'abcd\\e', b: 1 });
    expect(argsOf('[f(msg=("first line "\n    "second line"))]')).toEqual({ msg: 'first line second line' });
  });

  it('reads tuples as arrays: (1,) is [1], () is [], and (1) is 1', () => {
    expect(argsOf("[f(a=(1, 'x'), b=(1,), c=(), d=(1), e={'k': (True, None)}, g=[(1, 2)])]")).toEqual({
      a: [1, 'x'],
      b: [1],
      c: [],
      d: 1,
      e: { k: [true, null] },
      g: [[1, 2]],
    });
  });

  it("reads them in Olmo 3's lines and after Llama 4's token too", () => {
    const olmo = '<function_calls>\nwrite_file(path="a.py", content="""def f():\n    return 1\n""")\n</function_calls>';
    expect(callsOf(olmo)).toEqual([['write_file', '{"path":"a.py","content":"def f():\\n    return 1\\n"}']]);
    expect(callsOf("Sure.<|python_start|>[f(a=(1, 2))]<|python_end|>")).toEqual([['f', '{"a":[1,2]}']]);
  });

  it('takes a string or tuple left open, bytes, or a prefix Python has not for no call', () => {
    for (const text of [
      '[f(a="""abc)]',
      '[f(a="""abc")]',
      "[f(a=(1, 2)]",
      '[f(a=(1 2))]',
      '[f(a=b"x")]',
      '[f(a=f"{x}")]',
      '[f(a=rb"x")]',
      '[f(a="x" b)]',
      '<|python_start|>[f(a=r"x',
    ]) {
      expectNoCalls(text);
    }
  });

  it('leaves the remaining text as before around a call it now reads', () => {
    expect(parseToolCalls('<|tool_call_start|>[run(code="""x""")]<|tool_call_end|>Running it.')).toMatchObject({
      calls: [{ name: 'run', arguments: '{"code":"x"}' }],
      remainingText: 'Running it.',
      format: 'pythonic',
    });
  });
});
