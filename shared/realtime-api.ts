import {
  ApiGatewayManagementApiClient,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { traced } from './tracing';

let client: ApiGatewayManagementApiClient | undefined;

/** The WebSocket API's management endpoint (the stage URL in AWS, the local server locally). */
function managementApi(): ApiGatewayManagementApiClient {
  const endpoint = process.env.REALTIME_ENDPOINT;
  if (!endpoint) throw new Error('REALTIME_ENDPOINT is not configured');
  client ??= traced(new ApiGatewayManagementApiClient({ endpoint }));
  return client;
}

/** Sends one frame to an open WebSocket connection; false when the gateway reports it gone. */
export async function postToConnection(connectionId: string, data: Uint8Array): Promise<boolean> {
  try {
    await managementApi().send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: data }));
    return true;
  } catch (error) {
    if (error instanceof GoneException || (error as { name?: string }).name === 'GoneException') return false;
    throw error;
  }
}
