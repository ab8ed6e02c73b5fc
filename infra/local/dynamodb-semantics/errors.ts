/** DynamoDB's error answers, as AWS sends them (awsJson1_0: HTTP 400 and `__type`). */
import { TRANSACTION_CONFLICT_MESSAGE } from './conflicts';

const PREFIX = 'com.amazonaws.dynamodb.v20120810#';

/** A table's (or a partition of it) hot key throttling message, as AWS words it. */
export const TABLE_THROTTLE_MESSAGE =
  'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your ' +
  'table or index so please try again shortly. If exceptions persist, check if you have a hot key: ' +
  'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html';
/** The same for a global secondary index (a write throttled by an index partition). */
export const INDEX_THROTTLE_MESSAGE =
  'Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is ' +
  'automatically scaling your index so please try again shortly.';

export interface ErrorAnswer {
  status: number;
  body: string;
}

const answer = (type: string, fields: Record<string, unknown>): ErrorAnswer => ({
  status: 400,
  body: JSON.stringify({ __type: PREFIX + type, ...fields }),
});

export type CancellationCode = 'None' | 'TransactionConflict' | 'ThrottlingError';

export interface CancellationReason {
  Code: CancellationCode;
  Message?: string;
}

/** TransactionCanceledException with one reason per action, in order. */
export function transactionCanceled(reasons: readonly CancellationReason[]): ErrorAnswer {
  return answer('TransactionCanceledException', {
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons
      .map((reason) => reason.Code)
      .join(', ')}]`,
    CancellationReasons: reasons,
  });
}

export const conflictReason: CancellationReason = {
  Code: 'TransactionConflict',
  Message: TRANSACTION_CONFLICT_MESSAGE,
};

export const throttleReason = (index: boolean): CancellationReason => ({
  Code: 'ThrottlingError',
  Message: index ? INDEX_THROTTLE_MESSAGE : TABLE_THROTTLE_MESSAGE,
});

export function transactionConflict(): ErrorAnswer {
  return answer('TransactionConflictException', { message: TRANSACTION_CONFLICT_MESSAGE });
}

export function transactionInProgress(): ErrorAnswer {
  return answer('TransactionInProgressException', {
    message: 'The transaction with the given request token is already in progress.',
  });
}

/** ProvisionedThroughputExceededException with its throttling reason (`TableWriteKeyRangeThroughputExceeded`…). */
export function throughputExceeded(resource: string, index: boolean, kind: 'read' | 'write'): ErrorAnswer {
  return answer('ProvisionedThroughputExceededException', {
    message: index ? INDEX_THROTTLE_MESSAGE : TABLE_THROTTLE_MESSAGE,
    ThrottlingReasons: [
      {
        reason: `${index ? 'Index' : 'Table'}${kind === 'read' ? 'Read' : 'Write'}KeyRangeThroughputExceeded`,
        resource,
      },
    ],
  });
}
