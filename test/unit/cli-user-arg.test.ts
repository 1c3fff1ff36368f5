// `--user-endpoint`, `--user-model`, `--user-api-key-env`: the endpoint that plays τ²'s user
// simulator (docs/cli.md, A user in the loop). A flag that cannot name one is a usage error before
// anything plays; the key stays in the environment, named, never on the command line.
import * as assert from 'node:assert/strict';
import type { StudioError } from '../../src/core/base/errors';
import { userEndpointArg } from '../../src/cli/userArg';

const usage = (pattern: RegExp) => (e: StudioError) =>
  e.code === 'USAGE' && pattern.test(e.message);

describe('cli: the user endpoint flags', () => {
  it('name an endpoint, its model and the variable of its key; none without --user-endpoint', () => {
    assert.equal(userEndpointArg({}), undefined);
    assert.deepEqual(
      userEndpointArg({
        userEndpoint: 'http://127.0.0.1:8000/v1',
        userModel: 'qwen',
        userApiKeyEnv: 'USER_KEY',
      }),
      { baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen', apiKeyEnv: 'USER_KEY' },
    );
  });

  it('refuse a URL that is not http(s) or holds credentials, a missing model, a bad variable name', () => {
    assert.throws(
      () => userEndpointArg({ userEndpoint: 'nope', userModel: 'm' }),
      usage(/http\(s\)/),
    );
    assert.throws(
      () => userEndpointArg({ userEndpoint: 'http://a:b@host/v1', userModel: 'm' }),
      usage(/without credentials/),
    );
    assert.throws(() => userEndpointArg({ userEndpoint: 'http://host/v1' }), usage(/--user-model/));
    assert.throws(
      () =>
        userEndpointArg({ userEndpoint: 'http://host/v1', userModel: 'm', userApiKeyEnv: 'a-b' }),
      usage(/environment variable/),
    );
    assert.throws(() => userEndpointArg({ userModel: 'm' }), usage(/go with --user-endpoint/));
  });
});
