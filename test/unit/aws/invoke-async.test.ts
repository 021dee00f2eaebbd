// invokeAsync, which loads the Lambda client on first use: an asynchronous Invoke of the named
// function with the payload, against a local endpoint that answers as Lambda does.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const received: Received[] = [];
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    received.push({ method: request.method, url: request.url, headers: request.headers, body });
    response.writeHead(202).end();
  });
});
const saved = { ...process.env };

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
});

afterAll(async () => {
  process.env = saved;
  await new Promise((resolve) => server.close(resolve));
});

describe('invokeAsync', () => {
  it('invokes the named function asynchronously with the payload', async () => {
    const { invokeAsync } = await import('../../../lib/aws/lambda-runtime.js');
    await invokeAsync('orders-coordinator', {});
    await invokeAsync('orders-processor-stage-1', { sluice: 'tick', stageId: 'stage-1', topic: 'orders', partition: 3 });
    expect(received.map(({ method, url, headers }) => [method, url, headers['x-amz-invocation-type']])).toEqual([
      ['POST', '/2015-03-31/functions/orders-coordinator/invocations', 'Event'],
      ['POST', '/2015-03-31/functions/orders-processor-stage-1/invocations', 'Event'],
    ]);
    expect(JSON.parse(received[1]?.body ?? '')).toEqual({ sluice: 'tick', stageId: 'stage-1', topic: 'orders', partition: 3 });
  });
});
