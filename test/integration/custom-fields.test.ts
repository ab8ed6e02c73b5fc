import { beforeAll, describe, expect, it } from 'vitest';
import { FIELD_RULES_TTL_MS } from '../../shared/custom-fields/conversation-fields';
import {
  type ApiResponse,
  call,
  createTenant,
  createVisitor,
  platformToken,
  type Tenant,
} from '../helpers/api';

/**
 * Custom fields through the local gateway: definitions and their locale resolution, uniqueness,
 * tenancy, and the checks they put on conversation `customFields`.
 */
type Translation = {
  id: string;
  locale: string;
  status: string;
  label: string;
  reviewedAt: string | null;
  reviewedBy: string | null;
  updatedAt: string;
};
type Option = { id: string; value: string; label: string; locale: string; fallbackUsed: boolean };
type Field = {
  id: string;
  name: string;
  type: string;
  target: string;
  active: boolean;
  required: boolean;
  sortOrder: number;
  label: string;
  placeholder: string | null;
  locale: string;
  fallbackUsed: boolean;
  options: Option[];
  translations: Translation[];
  updatedAt: string;
};
type ErrorBody = { error: { code: string; details?: { field?: string; reason?: string }; fields?: object } };

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

let tenant: Tenant;
let other: Tenant;
let visitorId: string;
let sequence = 0;
const uniqueName = (base: string) => `${base}${++sequence}_${Date.now().toString(36)}`;

const published = (locale: string, label: string) => ({ locale, status: 'published', label });
const draft = (locale: string, label: string) => ({ locale, status: 'draft', label });

const createField = (body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Field>('POST', '/api/custom-fields', { token, body });

async function defineField(body: Record<string, unknown>): Promise<Field> {
  const created = await createField({ translations: [published('en', 'Label')], ...body });
  if (created.status !== 201) throw new Error(`create field: ${created.status} ${created.text}`);
  return created.body;
}

const getField = (id: string, query = '', token = tenant.apiKey) =>
  call<Field>('GET', `/api/custom-fields/${id}${query}`, { token });

beforeAll(async () => {
  tenant = await createTenant();
  const enabled = await call('PATCH', `/api/admin/organizations/${tenant.orgId}`, {
    token: platformToken(),
    body: { locales: ['en', 'fr', 'de'], defaultLocale: 'en' },
  });
  expect(enabled.status, enabled.text).toBe(200);
  other = await createTenant();
  visitorId = (await createVisitor(tenant.widgetKey)).visitor.id;
});

describe('custom-field definitions', () => {
  it('resolves texts: the requested locale, else the default, else the first published; drafts never answer', async () => {
    const created = await createField({
      name: uniqueName('issueType'),
      type: 'select',
      translations: [
        { ...published('en', 'Issue type'), placeholder: 'What went wrong?' },
        { ...published('fr', 'Type de problème'), placeholder: 'Quel est le problème ?' },
        draft('de', 'Problemart'),
      ],
      options: [
        { value: 'late', translations: [published('en', 'Late'), published('fr', 'En retard')] },
        // No English label: English reads fall back to the first published one.
        { value: 'damaged', translations: [draft('en', 'Damaged'), published('fr', 'Endommagé')] },
      ],
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      label: 'Issue type',
      placeholder: 'What went wrong?',
      locale: 'en',
      fallbackUsed: false,
      options: [
        { value: 'late', label: 'Late', locale: 'en', fallbackUsed: false },
        { value: 'damaged', label: 'Endommagé', locale: 'fr', fallbackUsed: true },
      ],
    });
    expect(created.body.translations.map((entry) => entry.locale)).toEqual(['en', 'fr', 'de']);

    const french = await getField(created.body.id, '?locale=fr');
    expect(french.body).toMatchObject({
      label: 'Type de problème',
      placeholder: 'Quel est le problème ?',
      locale: 'fr',
      fallbackUsed: false,
      options: [
        { label: 'En retard', locale: 'fr', fallbackUsed: false },
        { label: 'Endommagé', locale: 'fr', fallbackUsed: false },
      ],
    });
    // German is only a draft: the default locale answers.
    const german = await getField(created.body.id, '?locale=de');
    expect(german.body).toMatchObject({ label: 'Issue type', locale: 'en', fallbackUsed: true });

    // No published text in the requested nor the default locale: the first published one.
    const frenchOnly = await defineField({
      name: uniqueName('colis'),
      type: 'text',
      translations: [draft('en', 'Parcel'), published('fr', 'Colis'), published('de', 'Paket')],
    });
    expect((await getField(frenchOnly.id, '?locale=de')).body).toMatchObject({
      label: 'Paket',
      locale: 'de',
      fallbackUsed: false,
    });
    expect((await getField(frenchOnly.id)).body).toMatchObject({
      label: 'Colis',
      locale: 'fr',
      fallbackUsed: true,
    });

    const listed = await call<{ data: Field[] }>('GET', '/api/custom-fields?locale=fr&target=conversation', {
      token: tenant.operatorSession,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((field) => field.id === created.body.id)).toMatchObject({
      label: 'Type de problème',
      locale: 'fr',
    });
    const visitorFields = await call<{ data: Field[] }>('GET', '/api/custom-fields?target=visitor', {
      token: tenant.apiKey,
    });
    expect(visitorFields.body.data.some((field) => field.id === created.body.id)).toBe(false);
  });

  it('refuses a locale the organization has not enabled: 422 naming it', async () => {
    const field = await defineField({ name: uniqueName('orderNumber'), type: 'text' });
    for (const path of [`/api/custom-fields/${field.id}?locale=es`, '/api/custom-fields?locale=es']) {
      const refused = await call('GET', path, { token: tenant.apiKey });
      expect(refused.status, path).toBe(422);
      expect(errorOf(refused).details?.field).toBe('locale');
    }
    const spanish = await createField({
      name: uniqueName('pedido'),
      type: 'text',
      translations: [published('en', 'Order'), published('es', 'Pedido')],
    });
    expect(spanish.status).toBe(422);
    expect(errorOf(spanish).details?.field).toBe('translations.1.locale');
  });

  it('refuses definitions that could not be shown or filled in', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'select' }, 'options'],
      [{ type: 'multiselect', options: [] }, 'options'],
      [{ type: 'text', options: [{ value: 'a', translations: [published('en', 'A')] }] }, 'options'],
      [{ type: 'text', translations: [draft('en', 'Draft only')] }, 'translations'],
      [{ type: 'text', translations: [published('en', 'A'), published('en', 'B')] }, 'translations.1.locale'],
      [
        {
          type: 'select',
          options: [
            { value: 'a', translations: [published('en', 'A')] },
            { value: 'a', translations: [published('en', 'Again')] },
          ],
        },
        'options.1.value',
      ],
      [
        { type: 'select', options: [{ value: 'a', translations: [draft('en', 'A')] }] },
        'options.0.translations',
      ],
      [{ type: 'colour' }, 'type'],
      [{ type: 'text', name: '1st' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const refused = await createField({
        name: uniqueName('bad'),
        translations: [published('en', 'Label')],
        ...body,
      });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(errorOf(refused).details?.field, JSON.stringify(body)).toBe(field);
    }
  });

  it('keeps names unique in the organization: of two creates racing, one is 201 and the other 409', async () => {
    const name = uniqueName('raced');
    const body = { name, type: 'text', translations: [published('en', 'Raced')] };
    const results = await Promise.all([createField(body), createField(body, tenant.adminSession)]);
    expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
    const loser = results.find((result) => result.status === 409);
    expect(loser && errorOf(loser)).toMatchObject({ code: 'CONFLICT', details: { reason: 'name_taken' } });
    // Whatever the case or the target.
    const shouting = await createField({ ...body, name: name.toUpperCase(), target: 'visitor' });
    expect(shouting.status).toBe(409);
    // Another organization has its own names.
    expect((await createField(body, other.apiKey)).status).toBe(201);
    // A deleted field frees its name.
    const winner = results.find((result) => result.status === 201)?.body.id ?? '';
    expect((await call('DELETE', `/api/custom-fields/${winner}`, { token: tenant.apiKey })).status).toBe(200);
    expect((await createField(body)).status).toBe(201);
  });

  it('keeps organizations apart: an id of another organization is 404', async () => {
    const theirs = await createField(
      { name: uniqueName('theirs'), type: 'boolean', translations: [published('en', 'Theirs')] },
      other.apiKey,
    );
    expect(theirs.status).toBe(201);
    const path = `/api/custom-fields/${theirs.body.id}`;
    expect((await call('GET', path, { token: tenant.apiKey })).status).toBe(404);
    expect((await call('PATCH', path, { token: tenant.apiKey, body: { active: false } })).status).toBe(404);
    expect((await call('DELETE', path, { token: tenant.apiKey })).status).toBe(404);
    const listed = await call<{ data: Field[] }>('GET', '/api/custom-fields', { token: tenant.apiKey });
    expect(listed.body.data.some((field) => field.id === theirs.body.id)).toBe(false);
    expect((await call('GET', path, { token: other.apiKey })).status).toBe(200);
  });

  it('needs an admin to change definitions; any operator reads them', async () => {
    const body = { name: uniqueName('adminOnly'), type: 'text', translations: [published('en', 'A')] };
    expect((await createField(body, tenant.operatorSession)).status).toBe(403);
    const field = await defineField({ name: uniqueName('readable'), type: 'number' });
    expect((await getField(field.id, '', tenant.operatorSession)).status).toBe(200);
    const path = `/api/custom-fields/${field.id}`;
    expect((await call('DELETE', path, { token: tenant.operatorSession })).status).toBe(403);
  });

  it('PATCH changes labels, options, order, active and required, never name or type', async () => {
    const field = await defineField({
      name: uniqueName('delivery'),
      type: 'select',
      translations: [published('en', 'Delivery'), { ...published('fr', 'Livraison'), sourceLocale: 'en' }],
      options: [
        { value: 'late', translations: [published('en', 'Late')] },
        { value: 'lost', translations: [published('en', 'Lost')] },
      ],
    });
    const path = `/api/custom-fields/${field.id}`;
    for (const immutable of [{ name: 'renamed' }, { type: 'text' }]) {
      const refused = await call('PATCH', path, { token: tenant.apiKey, body: immutable });
      expect(refused.status).toBe(422);
      expect(errorOf(refused).details?.field).toBe(Object.keys(immutable)[0]);
    }
    const patched = await call<Field>('PATCH', path, {
      token: tenant.adminSession,
      body: {
        required: true,
        sortOrder: 5,
        active: false,
        translations: [
          published('en', 'Delivery'),
          { ...published('fr', 'Livraison'), sourceLocale: 'en', reviewed: true },
        ],
        options: [
          { value: 'damaged', translations: [published('en', 'Damaged')] },
          { value: 'late', translations: [published('en', 'Running late')] },
        ],
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      name: field.name,
      type: 'select',
      required: true,
      sortOrder: 5,
      active: false,
    });
    // The stored translations keep their ids; the review names the admin who made it.
    const [en, fr] = patched.body.translations;
    expect(en).toEqual(field.translations[0]);
    expect(fr).toMatchObject({ id: field.translations[1]?.id, reviewedBy: tenant.adminOperatorId });
    expect(fr?.reviewedAt).not.toBeNull();
    // Options: matched by value, in the new order; `lost` is gone.
    expect(patched.body.options.map((option) => [option.value, option.label])).toEqual([
      ['damaged', 'Damaged'],
      ['late', 'Running late'],
    ]);
    expect(patched.body.options[1]?.id).toBe(field.options[0]?.id);

    const empty = await call('PATCH', path, { token: tenant.apiKey, body: { options: [] } });
    expect(empty.status).toBe(422);
    expect(errorOf(empty).details?.field).toBe('options');

    // Nothing to change: nothing written.
    const again = await call<Field>('PATCH', path, { token: tenant.apiKey, body: { active: false } });
    expect(again.status).toBe(200);
    expect(again.body.updatedAt).toBe(patched.body.updatedAt);
  });
});

describe('conversation customFields', () => {
  const createConversation = (customFields: Record<string, unknown>) =>
    call<{ id: string; customFields: Record<string, unknown> }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, customFields },
    });
  const names: Record<string, string> = {};

  beforeAll(async () => {
    const define = async (key: string, body: Record<string, unknown>) => {
      names[key] = uniqueName(key);
      await defineField({ name: names[key], ...body });
    };
    const options = (...values: string[]) =>
      values.map((value) => ({ value, translations: [published('en', value)] }));
    await define('orderNumber', { type: 'text' });
    await define('notes', { type: 'textarea' });
    await define('score', { type: 'number' });
    await define('vip', { type: 'boolean' });
    await define('dueDate', { type: 'date' });
    await define('issue', { type: 'select', options: options('late', 'damaged') });
    await define('topics', { type: 'multiselect', options: options('billing', 'shipping') });
    await define('tier', { type: 'text', target: 'visitor' });
    await define('legacy', { type: 'text', active: false });
  });

  const name = (key: string) => names[key] ?? key;

  it('accepts values that fit the active conversation fields', async () => {
    const values = {
      [name('orderNumber')]: 'A-1042',
      [name('notes')]: 'Left at the door\nNo answer',
      [name('score')]: 4.5,
      [name('vip')]: true,
      [name('dueDate')]: '2026-11-30',
      [name('issue')]: 'late',
      [name('topics')]: ['shipping', 'billing'],
    };
    const created = await createConversation(values);
    expect(created.status, created.text).toBe(201);
    expect(created.body.customFields).toEqual(values);
    // null clears a value of any type.
    const cleared = { ...values, [name('score')]: null, [name('issue')]: null };
    const patched = await call<{ customFields: object }>('PATCH', `/api/conversations/${created.body.id}`, {
      token: tenant.apiKey,
      body: { customFields: cleared },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.customFields).toEqual(cleared);
  });

  it('refuses unknown names, wrong types and values outside the options: 422 naming customFields.<name>', async () => {
    const cases: [string, unknown][] = [
      ['colour', 'red'],
      [name('tier'), 'gold'],
      [name('legacy'), 'x'],
      [name('score'), '4.5'],
      [name('vip'), 'yes'],
      [name('orderNumber'), 'two\nlines'],
      [name('dueDate'), '2026-02-30'],
      [name('issue'), 'lost'],
      [name('topics'), ['shipping', 'returns']],
      [name('topics'), 'shipping'],
    ];
    for (const [field, value] of cases) {
      const refused = await createConversation({ [name('issue')]: 'late', [field]: value });
      expect(refused.status, `${field}: ${JSON.stringify(value)}`).toBe(422);
      expect(errorOf(refused).details?.field).toBe(`customFields.${field}`);
    }
    const conversation = await createConversation({});
    const patched = await call('PATCH', `/api/conversations/${conversation.body.id}`, {
      token: tenant.apiKey,
      body: { customFields: { [name('issue')]: 'lost', colour: 'red' } },
    });
    expect(patched.status).toBe(422);
    expect(errorOf(patched).details?.field).toBe(`customFields.${name('issue')}`);
    expect(errorOf(patched).fields).toHaveProperty([`customFields.colour`]);
    const accepted = await call<{ customFields: object }>(
      'PATCH',
      `/api/conversations/${conversation.body.id}`,
      {
        token: tenant.apiKey,
        body: { customFields: { [name('issue')]: 'damaged' } },
      },
    );
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.customFields).toEqual({ [name('issue')]: 'damaged' });
  });

  it('takes a field created a moment ago at once', async () => {
    const fresh = uniqueName('fresh');
    expect((await createConversation({ [fresh]: 'x' })).status).toBe(422);
    await defineField({ name: fresh, type: 'text' });
    expect((await createConversation({ [fresh]: 'x' })).status).toBe(201);
  });

  it('deleting a field leaves the values stored under it alone', async () => {
    const doomed = await defineField({
      name: uniqueName('doomed'),
      type: 'select',
      options: [
        { value: 'a', translations: [published('en', 'A')] },
        { value: 'b', translations: [published('en', 'B')] },
      ],
    });
    const conversation = await createConversation({ [doomed.name]: 'a', [name('vip')]: true });
    expect(conversation.status).toBe(201);
    const path = `/api/conversations/${conversation.body.id}`;
    expect((await call('DELETE', `/api/custom-fields/${doomed.id}`, { token: tenant.apiKey })).status).toBe(
      200,
    );
    const deletedAt = Date.now();
    const read = await call<{ customFields: object }>('GET', path, { token: tenant.apiKey });
    expect(read.body.customFields).toEqual({ [doomed.name]: 'a', [name('vip')]: true });
    // Sent back unchanged beside another change, the stored value stays writable; a new one is not.
    const kept = await call<{ customFields: object }>('PATCH', path, {
      token: tenant.apiKey,
      body: { customFields: { [doomed.name]: 'a', [name('vip')]: false } },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.customFields).toEqual({ [doomed.name]: 'a', [name('vip')]: false });
    // Another function's warm instance may trust the definitions it read for FIELD_RULES_TTL_MS
    // (as in AWS): a new value is refused everywhere once that has passed since the deletion.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, deletedAt + FIELD_RULES_TTL_MS - Date.now())),
    );
    const changed = await call('PATCH', path, {
      token: tenant.apiKey,
      body: { customFields: { [doomed.name]: 'b' } },
    });
    expect(changed.status).toBe(422);
    expect(errorOf(changed).details?.field).toBe(`customFields.${doomed.name}`);
  });
});
