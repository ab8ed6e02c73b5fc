import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../errors';
import type {
  CustomFieldOptionTranslation,
  CustomFieldTarget,
  CustomFieldTranslation,
  CustomFieldType,
} from '../schemas/custom-field';
import { db, tableName } from './client';
import { keys } from './keys';
import { type AuditBy, orgAudit, systemActor } from './org-audit';
import { queryPrefix } from './query';
import { retryOnConflict as retrying, transact, type Write } from './transaction';

/**
 * Custom-field definitions: one item per field in the organization's `FIELDS` partition, holding
 * its translations and its options with theirs, beside a name guard per field and one totals item.
 * The item is stored unresolved; answers resolve it per request (shared/locale).
 */
export interface StoredOption {
  id: string;
  value: string;
  sortOrder: number;
  translations: CustomFieldOptionTranslation[];
}

export interface CustomFieldDefinition {
  id: string;
  orgId: string;
  name: string;
  type: CustomFieldType;
  required: boolean;
  target: CustomFieldTarget;
  sortOrder: number;
  active: boolean;
  options: StoredOption[];
  translations: CustomFieldTranslation[];
  createdAt: string;
  updatedAt: string;
}

export interface StoredCustomField extends CustomFieldDefinition {
  /** Fences writers: every write is a Put conditioned on the `rev` it read. */
  rev: number;
  /** Its size as JSON, counted in the organization's totals. */
  storedBytes: number;
}

/**
 * One definition's size as JSON. DynamoDB's 400 KB item limit counts attribute names and values,
 * which the JSON text over-approximates; 300 000 bytes leaves room for the keys and the rest.
 */
export const MAX_DEFINITION_BYTES = 300_000;
/**
 * All definitions of an organization together. A list answers all of them at once, resolved
 * (each label copied once more at most): 2 MB stored keeps that answer far below Lambda's 6 MB
 * response limit, and the list within two or three 1 MB Query pages.
 */
export const MAX_ORGANIZATION_BYTES = 2_000_000;

const sizeOf = (definition: CustomFieldDefinition): number =>
  Buffer.byteLength(JSON.stringify(definition), 'utf8');

function definitionOf(item: Record<string, unknown>): StoredCustomField {
  return {
    id: String(item.id),
    orgId: String(item.orgId),
    name: String(item.name),
    type: item.type as CustomFieldType,
    required: item.required === true,
    target: item.target as CustomFieldTarget,
    sortOrder: Number(item.sortOrder ?? 0),
    active: item.active !== false,
    options: (item.options as StoredOption[] | undefined) ?? [],
    translations: (item.translations as CustomFieldTranslation[] | undefined) ?? [],
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    rev: Number(item.rev ?? 1),
    storedBytes: Number(item.storedBytes ?? 0),
  };
}

/** The definition without the service's own fields. */
export function definitionPart(stored: StoredCustomField): CustomFieldDefinition {
  const { rev: _rev, storedBytes: _bytes, ...definition } = stored;
  return definition;
}

function sized(definition: CustomFieldDefinition): number {
  const bytes = sizeOf(definition);
  if (bytes > MAX_DEFINITION_BYTES) {
    const field = definition.options.length > 0 ? 'options' : 'translations';
    throw ValidationError.field(
      field,
      `The definition would take ${bytes} bytes; at most ${MAX_DEFINITION_BYTES} are allowed: fewer options or translations`,
      { reason: 'definition_too_large' },
    );
  }
  return bytes;
}

const budgetExceeded = () =>
  new ConflictError(
    `The organization's custom-field definitions would exceed ${MAX_ORGANIZATION_BYTES} bytes together: delete unused fields first`,
    { reason: 'custom_field_budget_exceeded' },
  );

/** Adds to the organization's totals, refusing growth beyond the budget. */
function totalsWrite(orgId: string, definitions: number, bytes: number): Write {
  const growing = bytes > 0;
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.customFieldTotals(orgId),
        UpdateExpression: 'SET entity = :entity ADD definitions :definitions, storedBytes :bytes',
        ...(growing
          ? { ConditionExpression: 'attribute_not_exists(storedBytes) OR storedBytes <= :room' }
          : {}),
        ExpressionAttributeValues: {
          ':entity': 'customFieldTotals',
          ':definitions': definitions,
          ':bytes': bytes,
          ...(growing ? { ':room': MAX_ORGANIZATION_BYTES - bytes } : {}),
        },
      },
    },
    onConditionFailed: budgetExceeded,
  };
}

export const customFields = {
  /**
   * One transaction: the definition, its name guard (a duplicate name, or a second create racing
   * this one, is 409) and the organization's totals.
   */
  async create(definition: CustomFieldDefinition): Promise<StoredCustomField> {
    const storedBytes = sized(definition);
    const stored: StoredCustomField = { ...definition, rev: 1, storedBytes };
    const orgId = definition.orgId;
    const writes: Write[] = [
      {
        action: {
          Put: {
            TableName: tableName,
            Item: { ...keys.customField(orgId, definition.id), entity: 'customField', ...stored },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        action: {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.customFieldName(orgId, definition.name),
              entity: 'customFieldName',
              fieldId: definition.id,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        onConditionFailed: () =>
          new ConflictError(`A custom field named "${definition.name}" already exists`, {
            reason: 'name_taken',
          }),
      },
      totalsWrite(orgId, 1, storedBytes),
    ];
    // Two creates at once touch the same guard or totals: the loser is cancelled and tries again,
    // meeting the winner's guard (409) or fitting in beside it.
    await retrying(() => transact(writes));
    return stored;
  },

  /** Every definition of the organization, in sort-key (creation) order: one Query per 1 MB page. */
  async all(orgId: string, options: { consistent?: boolean } = {}): Promise<StoredCustomField[]> {
    const items = await queryPrefix(keys.customFieldsPartition(orgId), keys.customFieldPrefix, options);
    return items.map(definitionOf);
  },

  /** One strongly consistent GetItem (a client reads its own writes). */
  async get(orgId: string, fieldId: string): Promise<StoredCustomField | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.customField(orgId, fieldId), ConsistentRead: true }),
    );
    return Item ? definitionOf(Item) : undefined;
  },

  /**
   * Read, change, Put on `rev`, retried when another writer got there first. `change` returns the
   * definition after the change, or undefined when nothing changes (nothing is written). Undefined
   * when there is no such field.
   */
  async update(
    orgId: string,
    fieldId: string,
    change: (current: CustomFieldDefinition) => CustomFieldDefinition | undefined,
  ): Promise<StoredCustomField | undefined> {
    return retrying(async () => {
      const current = await customFields.get(orgId, fieldId);
      if (!current) return undefined;
      const next = change(definitionPart(current));
      if (!next) return current;
      const storedBytes = sized(next);
      const stored: StoredCustomField = { ...next, rev: current.rev + 1, storedBytes };
      const writes: Write[] = [
        {
          action: {
            Put: {
              TableName: tableName,
              Item: { ...keys.customField(orgId, fieldId), entity: 'customField', ...stored },
              ConditionExpression: 'rev = :rev',
              ExpressionAttributeValues: { ':rev': current.rev },
            },
          },
        },
      ];
      const delta = storedBytes - current.storedBytes;
      if (delta !== 0) writes.push(totalsWrite(orgId, 0, delta));
      await transact(writes);
      return stored;
    });
  },

  /**
   * Deletes the definition with its translations and options, frees its name and gives its bytes
   * back; values stored on conversations are not touched. False when there is no such field.
   */
  async remove(orgId: string, fieldId: string, by: AuditBy = systemActor): Promise<boolean> {
    return retrying(async () => {
      const current = await customFields.get(orgId, fieldId);
      if (!current) return false;
      await transact([
        {
          action: {
            Delete: {
              TableName: tableName,
              Key: keys.customField(orgId, fieldId),
              ConditionExpression: 'rev = :rev',
              ExpressionAttributeValues: { ':rev': current.rev },
            },
          },
        },
        { action: { Delete: { TableName: tableName, Key: keys.customFieldName(orgId, current.name) } } },
        totalsWrite(orgId, -1, -current.storedBytes),
        {
          action: orgAudit.write(orgId, {
            ...by,
            type: 'custom_field.deleted',
            target: { type: 'custom_field', id: fieldId },
            details: { name: current.name },
          }),
        },
      ]);
      return true;
    });
  },
};
