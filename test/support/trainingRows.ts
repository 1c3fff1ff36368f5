/** Small act and rehearse rows in the documented format (docs/dataset-format.md), for training runs in tests. */

const CITIES = ['Paris', 'Lisbon', 'Oslo', 'Tokyo', 'Lima', 'Cairo', 'Quito', 'Seoul'];
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

/** Sixteen rows (an act and a rehearse row per city) as JSONL text. */
export function weatherRows(): string {
  return CITIES.flatMap((city, i) => {
    const call = `\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"${city}"}}\n</tool_call>`;
    const base = {
      v: 1,
      reward: null,
      group: null,
      weight: 1,
      source: 'demonstration',
      task: `t${i}`,
      episode: 'e',
    };
    return [
      {
        ...base,
        id: `t${i}/act`,
        role: 'act',
        tools: TOOLS,
        messages: [{ role: 'user', content: `Weather in ${city}?` }],
        target: call,
      },
      {
        ...base,
        id: `t${i}/rehearse`,
        role: 'rehearse',
        call: 'c1',
        messages: [
          { role: 'system', content: 'You are a precise tool simulator.' },
          { role: 'user', content: `get_weather {"city":"${city}"}` },
        ],
        target: `\n<execution_result>\n{"city":"${city}","temperature":${10 + i}}\n</execution_result>`,
      },
    ];
  })
    .map((r) => JSON.stringify(r) + '\n')
    .join('');
}
