import type { AppDeps } from '../../api/context';
import type { Actor } from '../../domain/accounts/actor';
import { listApiKeys } from '../../domain/accounts/api-keys-service';
import { idOf } from '../../domain/page';
import { getDelivery, listAttempts, listDeliveries, sendTestDelivery, startRecovery } from '../../delivery/deliveries-service';
import {
  closeEndpointCircuit,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateEndpointSecret,
  testEndpointFilter,
  testEndpointTransformation,
  updateEndpoint,
} from '../../delivery/endpoints/endpoints-service';
import { heldCount } from '../../delivery/endpoints/endpoint-admission';
import { feedStates } from '../../delivery/feeds/feed-service';
import { ApiError } from '../../errors';
import type { WebhookEndpoint } from '../../delivery/endpoints/webhook-endpoint.entity';
import type { TransformationLimits } from '../../config';
import type { EndpointFilter, EndpointTransformation, WebhookEndpointAuthenticationInput, WebhookEndpointCreate, WebhookEndpointUpdate } from '../../generated/schemas';
import { isUuid } from '../../schemas/formats';
import type { ConsoleContext, ConsolePage, FormBody } from '../context';
import { fieldOf, formRefusal, list, parseUtcLocal, redirectWithFlash, sendPage, text, utcLocal } from '../http';
import type { Session } from '../users/sessions';
import {
  confirmEndpointPage,
  type EndpointForm,
  endpointFormPage,
  type EndpointFormMode,
  type FilterTestResult,
  type HeaderRow,
  endpointPage,
  endpointSecretPage,
  endpointsPage,
} from '../views/endpoints';
import { NO_TRANSFORMATION_FORM, transformationFormOf, type TransformationTestView } from '../views/endpoint-transformation';

const SCHEMA = 'rest/webhook-endpoints.json#/$defs';

const notFoundAsNull = (error: unknown): null => {
  if (error instanceof ApiError && error.code === 'NOT_FOUND') return null;
  throw error;
};

/**
 * The console registers endpoints for no key unless one is chosen (api_key_id is always given), so the actor's
 * key is never used; like the CLI's operator, it names who acts.
 */
const consoleActor = (session: Session): Actor => ({ companyId: session.user.companyId, apiKeyId: 'console' });

/** The header rows sent (header_name_0, header_value_0, …), without the empty ones. */
function headerRowsOf(form: FormBody): HeaderRow[] {
  const rows: HeaderRow[] = [];
  for (let index = 0; `header_name_${index}` in form; index++) {
    const row = {
      name: text(form, `header_name_${index}`).trim(),
      value: text(form, `header_value_${index}`),
      secret: text(form, `header_secret_${index}`) === 'on',
      saved: text(form, `header_saved_${index}`) === 'on',
    };
    if (row.name || row.value) rows.push(row);
  }
  return rows;
}

function formOf(ctx: ConsoleContext, saved: Pick<WebhookEndpoint, 'delivery'> | null): EndpointForm {
  const { form } = ctx.state;
  return {
    delivery: saved?.delivery ?? (text(form, 'delivery') || 'webhook'),
    url: text(form, 'url').trim(),
    description: text(form, 'description').trim(),
    eventTypes: list(form, 'event_types'),
    payloadShape: text(form, 'payload_shape'),
    ordering: text(form, 'ordering'),
    apiKeyId: text(form, 'api_key_id'),
    headers: headerRowsOf(form),
    oauth: {
      tokenUrl: text(form, 'oauth_token_url').trim(),
      clientId: text(form, 'oauth_client_id').trim(),
      clientSecret: text(form, 'oauth_client_secret'),
      scope: text(form, 'oauth_scope').trim(),
      audience: text(form, 'oauth_audience').trim(),
    },
    clientSecretSaved: text(form, 'oauth_client_secret_saved') === 'on',
    certificate: text(form, 'client_certificate').trim(),
    privateKey: text(form, 'client_private_key').trim(),
    privateKeySaved: text(form, 'client_private_key_saved') === 'on',
    filter: text(form, 'filter').trim(),
    transformation: { body: text(form, 'transformation_body').trim(), headers: text(form, 'transformation_headers').trim(), path: text(form, 'transformation_path').trim() },
  };
}

/** The edit form of a saved endpoint: its settings, its secrets only as "saved". */
function savedFormOf(endpoint: WebhookEndpoint): EndpointForm {
  const { oauth } = endpoint;
  return {
    delivery: endpoint.delivery,
    url: endpoint.url ?? '',
    description: endpoint.description ?? '',
    eventTypes: endpoint.eventTypes,
    payloadShape: endpoint.payloadShape,
    ordering: endpoint.ordering,
    apiKeyId: idOf(endpoint.apiKey) ?? '',
    headers: (endpoint.authHeaders ?? []).map((header) => ({ name: header.name, value: header.secret ? '' : header.value, secret: header.secret, saved: header.secret })),
    oauth: { tokenUrl: oauth?.tokenUrl ?? '', clientId: oauth?.clientId ?? '', clientSecret: '', scope: oauth?.scope ?? '', audience: oauth?.audience ?? '' },
    clientSecretSaved: oauth !== null,
    certificate: endpoint.clientCertificate ?? '',
    privateKey: '',
    privateKeySaved: endpoint.clientKeySealed !== null,
    filter: endpoint.filter ? JSON.stringify(endpoint.filter, null, 2) : '',
    transformation: transformationFormOf(endpoint.transformation),
  };
}

const EMPTY_FORM: EndpointForm = {
  delivery: 'webhook',
  url: '',
  description: '',
  eventTypes: [],
  payloadShape: 'A',
  ordering: 'none',
  apiKeyId: '',
  headers: [],
  oauth: { tokenUrl: '', clientId: '', clientSecret: '', scope: '', audience: '' },
  clientSecretSaved: false,
  certificate: '',
  privateKey: '',
  privateKeySaved: false,
  filter: '',
  transformation: NO_TRANSFORMATION_FORM,
};

/** The filter as typed: JSON (checked as the REST body's filter), or nothing for none. */
function filterOf(form: EndpointForm): EndpointFilter {
  if (!form.filter) return null;
  try {
    return JSON.parse(form.filter) as EndpointFilter;
  } catch (error) {
    const reason = `is not JSON: ${(error as Error).message}`;
    throw ApiError.invalid('filter', reason, `The filter ${reason}.`);
  }
}

/**
 * The transformation as typed, as the REST body's: none when every field is empty; headers one "Name: expression" a
 * line (a line without its colon is refused, naming it).
 */
function transformationOf({ transformation }: EndpointForm): EndpointTransformation {
  if (!transformation.body && !transformation.headers && !transformation.path) return null;
  if (!transformation.body) throw ApiError.invalid('transformation.body', 'is required beside headers or a path', 'Enter the body expression of the transformation.');
  const headers: Record<string, string> = {};
  for (const [index, line] of transformation.headers.split('\n').entries()) {
    if (!line.trim()) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw ApiError.invalid('transformation.headers', `line ${index + 1} must be Name: expression`, `Header line ${index + 1} of the transformation must be Name: expression.`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return {
    body: transformation.body,
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(transformation.path ? { path: transformation.path } : {}),
  };
}

/** The form's authentication as the REST body's: every method given, so what the form leaves empty is removed. */
function authenticationOf(form: EndpointForm): WebhookEndpointAuthenticationInput {
  const { oauth } = form;
  return {
    headers: form.headers.map((row) => ({ name: row.name, ...(row.value ? { value: row.value } : {}), ...(row.secret ? { secret: true } : {}) })),
    oauth:
      oauth.tokenUrl || oauth.clientId
        ? {
            token_url: oauth.tokenUrl,
            client_id: oauth.clientId,
            ...(oauth.clientSecret ? { client_secret: oauth.clientSecret } : {}),
            scope: oauth.scope || null,
            audience: oauth.audience || null,
          }
        : null,
    client_certificate: form.certificate ? { certificate: form.certificate, ...(form.privateKey ? { private_key: form.privateKey } : {}) } : null,
  };
}

/**
 * The form as the REST body it stands for (a blank description is none: left out of a registration, cleared by
 * an edit); blanks the form cannot leave out are refused with plain words.
 */
function bodyOf(form: EndpointForm, mode: 'create' | 'update') {
  const feed = form.delivery === 'feed';
  if (!feed && !form.url) throw ApiError.invalid('url', 'is required', "Enter the endpoint's URL.");
  if (form.eventTypes.length === 0) throw ApiError.invalid('event_types', 'is required', 'Choose at least one event or category.');
  const description = form.description || (mode === 'update' ? null : undefined);
  return {
    ...(mode === 'create' ? { delivery: form.delivery } : {}),
    // A URL typed for a feed is sent, for the service to refuse in its words.
    ...(form.url ? { url: form.url } : {}),
    event_types: form.eventTypes,
    payload_shape: form.payloadShape || 'A',
    ...(feed ? {} : { ordering: form.ordering || 'none' }),
    ...(description === undefined ? {} : { description }),
    api_key_id: form.apiKeyId || null,
    ...(feed ? {} : { authentication: authenticationOf(form) }),
    filter: filterOf(form),
    transformation: transformationOf(form),
  };
}

/** The endpoint's filter tried on the company's latest event of a type; a refusal (no such event yet) is said, not thrown. */
async function filterTestOf(em: ConsoleContext['state']['em'], companyId: string, endpointId: string, eventType: string): Promise<FilterTestResult> {
  try {
    const { matches } = await testEndpointFilter(em, companyId, endpointId, { eventType });
    return { eventType, matches };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { eventType, problem: error.message };
  }
}

/** The endpoint's transformation tried on the company's latest event of a type; a refusal (no such event yet) is said, not thrown. */
async function transformationTestOf(ctx: ConsoleContext, limits: TransformationLimits, companyId: string, endpointId: string, eventType: string): Promise<TransformationTestView> {
  try {
    return { eventType, result: await testEndpointTransformation(ctx.state.em, limits, companyId, endpointId, { eventType }) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { eventType, problem: error.message };
  }
}

/** Webhook endpoints (webhooks.md 5): list, register, edit, disable or enable, delete, rotate the secret, test, resend. */
export function endpointPages({ secretBox, deliveryWorkflows, config, validator }: AppDeps): ConsolePage[] {
  const policy = { allowLoopback: config.webhooks.allowLoopback };

  const showForm = async (ctx: ConsoleContext, session: Session, mode: EndpointFormMode, form: EndpointForm, status = 200) =>
    sendPage(ctx, endpointFormPage(session, mode, form, await listApiKeys(ctx.state.em, session.user.companyId)), status);

  /** Runs a form's change; a refusal re-renders the form (400 or 409) with the problem next to its field. */
  const withForm = async (ctx: ConsoleContext, session: Session, mode: EndpointFormMode, change: (form: EndpointForm) => Promise<void>, saved: Pick<WebhookEndpoint, 'delivery'> | null = null) => {
    const form = formOf(ctx, saved);
    try {
      await change(form);
    } catch (error) {
      const refusal = formRefusal(error);
      const errors = { [fieldOf(refusal)]: refusal.message, [refusal.details.field ?? '']: refusal.details.reason ?? refusal.message };
      // Secrets typed are not put back into the page: they are typed again.
      const retyped = { ...form, headers: form.headers.map((row) => (row.secret ? { ...row, value: '' } : row)), privateKey: '' };
      await showForm(ctx, session, mode, { ...retyped, error: refusal.message, errors }, refusal.status);
    }
  };

  const newMode = { action: '/console/endpoints', title: 'Register an endpoint', submit: 'Register endpoint', chooseDelivery: true };
  const editMode = (id: string) => ({ action: `/console/endpoints/${id}`, title: 'Edit the endpoint', submit: 'Save changes' });

  return [
    {
      method: 'GET',
      path: '/endpoints',
      role: 'viewer',
      async handler(ctx, session) {
        const { em } = ctx.state;
        const { items } = await listEndpoints(em, session.user.companyId, { limit: 100, offset: 0 });
        sendPage(ctx, endpointsPage(session, items, await listApiKeys(em, session.user.companyId)));
      },
    },
    {
      method: 'GET',
      path: '/endpoints/new',
      role: 'admin',
      handler: (ctx, session) => showForm(ctx, session, newMode, EMPTY_FORM),
    },
    {
      method: 'POST',
      path: '/endpoints',
      role: 'admin',
      handler: (ctx, session) =>
        withForm(ctx, session, newMode, async (form) => {
          const body = validator.validate<WebhookEndpointCreate>(`${SCHEMA}/create`, bodyOf(form, 'create'));
          const { endpoint, secret } = await registerEndpoint(ctx.state.em, secretBox, policy, consoleActor(session), {
            delivery: body.delivery,
            url: body.url,
            eventTypes: body.event_types,
            payloadShape: body.payload_shape ?? 'A',
            ordering: body.ordering,
            description: body.description ?? null,
            apiKeyId: body.api_key_id ?? null,
            authentication: body.authentication,
            filter: body.filter,
            transformation: body.transformation,
          });
          ctx.state.log.info({ console: 'endpoint registered', userId: session.user.id, endpointId: endpoint.id }, 'console action');
          // A feed signs nothing: its secret is of no use to its subscriber.
          if (endpoint.delivery === 'feed') await redirectWithFlash(ctx, session, `/console/endpoints/${endpoint.id}`, 'The feed is registered: its subscriber reads it with an API key of your company.');
          else sendPage(ctx, endpointSecretPage(session, endpoint, secret, 'Endpoint registered'));
        }),
    },
    {
      method: 'GET',
      path: '/endpoints/:id',
      role: 'viewer',
      async handler(ctx, session) {
        const { em } = ctx.state;
        const { companyId } = session.user;
        const endpoint = await getEndpoint(em, companyId, ctx.params.id!);
        const keyId = idOf(endpoint.apiKey);
        const keyName = keyId ? ((await listApiKeys(em, companyId)).find((k) => k.id === keyId)?.name ?? null) : null;
        const { items: recent } = await listDeliveries(em, companyId, { limit: 10, offset: 0 }, { endpointId: endpoint.id });
        const testId = typeof ctx.query.test === 'string' && isUuid(ctx.query.test) ? ctx.query.test : null;
        const tested = testId ? await getDelivery(em, companyId, testId).catch(notFoundAsNull) : null;
        const testResult = tested && tested.isTest && idOf(tested.endpoint) === endpoint.id ? { delivery: tested, attempts: await listAttempts(em, tested) } : null;
        const resendSince = utcLocal(new Date(Date.now() - 24 * 3600_000));
        const held = await heldCount(em, endpoint.id);
        const filterTestType = typeof ctx.query.filter_test === 'string' && endpoint.filter ? ctx.query.filter_test : null;
        const filterTest = filterTestType ? await filterTestOf(em, companyId, endpoint.id, filterTestType) : null;
        const transformationTestType = typeof ctx.query.transformation_test === 'string' && endpoint.transformation ? ctx.query.transformation_test : null;
        const transformationTest = transformationTestType ? await transformationTestOf(ctx, config.webhooks.transformation, companyId, endpoint.id, transformationTestType) : null;
        const feed = (await feedStates(em, [endpoint.id])).get(endpoint.id) ?? null;
        sendPage(ctx, endpointPage(session, { endpoint, keyName, recent, testResult, resendSince, held, filterTest, transformationTest, feed }));
      },
    },
    {
      method: 'GET',
      path: '/endpoints/:id/edit',
      role: 'admin',
      async handler(ctx, session) {
        const endpoint = await getEndpoint(ctx.state.em, session.user.companyId, ctx.params.id!);
        await showForm(ctx, session, editMode(endpoint.id), savedFormOf(endpoint));
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id',
      role: 'admin',
      handler: async (ctx, session) =>
        withForm(ctx, session, editMode(ctx.params.id!), async (form) => {
          const body = validator.validate<WebhookEndpointUpdate>(`${SCHEMA}/update`, bodyOf(form, 'update'));
          const endpoint = await updateEndpoint(ctx.state.em, deliveryWorkflows, secretBox, policy, session.user.companyId, ctx.params.id!, {
            url: body.url,
            eventTypes: body.event_types,
            payloadShape: body.payload_shape,
            ordering: body.ordering,
            description: body.description,
            apiKeyId: body.api_key_id,
            authentication: body.authentication,
            filter: body.filter,
            transformation: body.transformation,
          });
          await redirectWithFlash(ctx, session, `/console/endpoints/${endpoint.id}`, 'The endpoint is saved.');
        }, await getEndpoint(ctx.state.em, session.user.companyId, ctx.params.id!)),
    },
    {
      method: 'POST',
      path: '/endpoints/:id/status',
      role: 'admin',
      async handler(ctx, session) {
        const status = text(ctx.state.form, 'status');
        if (status !== 'active' && status !== 'disabled') throw ApiError.invalid('status', 'must be active or disabled');
        const endpoint = await updateEndpoint(ctx.state.em, deliveryWorkflows, secretBox, policy, session.user.companyId, ctx.params.id!, { status });
        const message = status === 'active' ? 'The endpoint is enabled: new events are delivered to it.' : 'The endpoint is disabled: it gets no new deliveries, and pending ones fail.';
        await redirectWithFlash(ctx, session, `/console/endpoints/${endpoint.id}`, message);
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id/close-circuit',
      role: 'admin',
      async handler(ctx, session) {
        const endpoint = await closeEndpointCircuit(ctx.state.em, deliveryWorkflows, config.webhooks.admission, session.user.companyId, ctx.params.id!);
        ctx.state.log.info({ console: 'circuit closed', userId: session.user.id, endpointId: endpoint.id }, 'console action');
        await redirectWithFlash(ctx, session, `/console/endpoints/${endpoint.id}`, 'The circuit breaker is closed: waiting deliveries go out now, oldest first.');
      },
    },
    {
      method: 'GET',
      path: '/endpoints/:id/rotate-secret',
      role: 'admin',
      async handler(ctx, session) {
        const endpoint = await getEndpoint(ctx.state.em, session.user.companyId, ctx.params.id!);
        sendPage(
          ctx,
          confirmEndpointPage(session, endpoint, {
            title: 'Rotate the signing secret?',
            explanation:
              'A new secret is issued and shown once; deliveries are signed with it at once, and for ' +
              `${Math.round(config.webhooks.secretOverlapMs / 3_600_000)} h also with the old one (X-Webhook-Signatures), so the receiver can switch without losing any.`,
            action: `/console/endpoints/${endpoint.id}/rotate-secret`,
            button: 'Rotate secret',
          }),
        );
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id/rotate-secret',
      role: 'admin',
      async handler(ctx, session) {
        const { endpoint, secret } = await rotateEndpointSecret(ctx.state.em, secretBox, session.user.companyId, ctx.params.id!, config.webhooks.secretOverlapMs);
        ctx.state.log.info({ console: 'endpoint secret rotated', userId: session.user.id, endpointId: endpoint.id }, 'console action');
        sendPage(ctx, endpointSecretPage(session, endpoint, secret, 'New signing secret'));
      },
    },
    {
      method: 'GET',
      path: '/endpoints/:id/delete',
      role: 'admin',
      async handler(ctx, session) {
        const endpoint = await getEndpoint(ctx.state.em, session.user.companyId, ctx.params.id!);
        sendPage(
          ctx,
          confirmEndpointPage(session, endpoint, {
            title: 'Delete the endpoint?',
            explanation: 'It gets no new deliveries, and pending ones fail at their next attempt. Its delivery log is kept.',
            action: `/console/endpoints/${endpoint.id}/delete`,
            button: 'Delete endpoint',
          }),
        );
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id/delete',
      role: 'admin',
      async handler(ctx, session) {
        await deleteEndpoint(ctx.state.em, deliveryWorkflows, session.user.companyId, ctx.params.id!);
        ctx.state.log.info({ console: 'endpoint deleted', userId: session.user.id, endpointId: ctx.params.id }, 'console action');
        await redirectWithFlash(ctx, session, '/console/endpoints', 'The endpoint is deleted.');
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id/test',
      role: 'admin',
      async handler(ctx, session) {
        const { delivery } = await sendTestDelivery(ctx.state.em, deliveryWorkflows, config, session.user.companyId, ctx.params.id!);
        ctx.status = 303;
        ctx.redirect(`/console/endpoints/${ctx.params.id}?test=${delivery.id}#test-result`);
      },
    },
    {
      method: 'POST',
      path: '/endpoints/:id/resend-failed',
      role: 'admin',
      async handler(ctx, session) {
        const since = parseUtcLocal(text(ctx.state.form, 'since'));
        if (!since) throw ApiError.invalid('since', 'must be a date and time', 'Give the time to resend from as a date and time (UTC).');
        const id = ctx.params.id!;
        // The bulk recovery of REST and the CLI: a workflow re-runs them in the background, however many.
        const recovery = await startRecovery(ctx.state.em, deliveryWorkflows, session.user.companyId, id, since);
        const requested = recovery.deliveryIds.length;
        ctx.state.log.info({ console: 'failed deliveries resent', userId: session.user.id, endpointId: id, recoveryId: recovery.id, requested }, 'console action');
        await redirectWithFlash(
          ctx,
          session,
          `/console/deliveries?endpoint_id=${id}`,
          `Resend requested for ${requested} failed or cancelled deliver${requested === 1 ? 'y' : 'ies'} made since ${utcLocal(since).replace('T', ' ')} UTC.`,
        );
      },
    },
  ];
}
