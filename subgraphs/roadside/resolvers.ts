import type { SubgraphContext } from '../platform/context.ts';
import { sandboxResetPart } from '../platform/db/sandbox-reset.ts';
import { RescueSession } from './entities.ts';
import type { ProviderFile, RescueAsset, RescueMember, RescueProvider, RescueRequest, RescueService, RescueStatusEvent, TowLocation } from './entities.ts';
import type { RoadsideLoaders } from './loaders.ts';
import { BenefitService } from './services/benefits.ts';
import { FileService, type FileFilter, type UploadInput } from './services/files.ts';
import { MemberService, type ProvisioningFields, type ProvisioningKey } from './services/members.ts';
import { ReferenceService } from './services/reference.ts';
import { RescueRequestService, type DispatchInput, type QuoteRequest, type StatusUpdateInput } from './services/rescues.ts';
import { SessionService, type SessionInput } from './services/sessions.ts';

type Ctx = SubgraphContext<RoadsideLoaders>;
type Args<T> = T;

const rescues = (ctx: Ctx) => new RescueRequestService(ctx.em);
const reference = (ctx: Ctx) => new ReferenceService(ctx.em);
const members = (ctx: Ctx) => new MemberService(ctx.em);
const files = (ctx: Ctx) => new FileService(ctx.em);
const sessions = (ctx: Ctx) => new SessionService(ctx.em);

const position = (latitude: number, longitude: number) => ({ latitude, longitude });
const today = () => new Date().toISOString().slice(0, 10);
const done = (r: RescueRequest) => r.status === 'COMPLETED' || r.status === 'CANCELLED';

/** A provisioned member + asset as the RescueProvisioning type. */
function provisioning({ member, asset }: { member: RescueMember; asset: RescueAsset }) {
  return {
    partnerCode: member.partnerCode, memberId: member.memberId, assetIntegrationId: asset.assetIntegrationId,
    productType: member.productType, firstName: member.firstName, lastName: member.lastName, address1: member.address1, address2: member.address2,
    city: member.city, state: member.state, zip: member.zip, emailAddress: member.emailAddress, phone: member.phone, companyName: member.companyName,
    make: asset.make, model: asset.model, year: asset.year, vin: asset.vin, effectiveEndDate: member.effectiveEndDate,
    milesPerTow: member.milesPerTow, numberOfEvents: member.numberOfEvents, partnerPay: member.partnerPay, serviceWeight: member.serviceWeight,
    status: member.effectiveEndDate == null || member.effectiveEndDate >= today() ? 'Active' : 'Inactive',
    createdAt: asset.createdAt, updatedAt: member.updatedAt > asset.updatedAt ? member.updatedAt : asset.updatedAt,
  };
}

const ack = (message: string) => (rescue: RescueRequest) => ({ status: 'OK', message, rescue });

export const resolvers = {
  SandboxReset: sandboxResetPart('roadside'),
  Query: {
    rescue: async (_: unknown, a: Args<{ reqId: string; sessionId?: string | null }>, ctx: Ctx) => {
      const rescue = await ctx.loaders.rescueById.load(a.reqId);
      return rescue && (a.sessionId == null || a.sessionId === rescue.sessionId) ? rescue : null;
    },
    rescueBenefits: async (_: unknown, a: Args<{ sessionId: string; appId?: string | null }>, ctx: Ctx) =>
      new BenefitService(ctx.em).forSession(await sessions(ctx).get(a.sessionId, a.appId)),
    rescueSession: (_: unknown, a: Args<{ sessionId: string }>, ctx: Ctx) => ctx.em.findOne(RescueSession, { sessionId: a.sessionId }),
    vehicleMakes: (_: unknown, __: unknown, ctx: Ctx) => reference(ctx).makes(),
    vehicleModels: (_: unknown, a: Args<{ make: string }>, ctx: Ctx) => reference(ctx).models(a.make),
    towLocations: async (_: unknown, a: Parameters<ReferenceService['towLocations']>[0], ctx: Ctx) =>
      (await reference(ctx).towLocations(a)).map((r) => ({ ...r.location, distanceMiles: r.distanceMiles })),
    rescueAvailability: (_: unknown, a: Args<{ latitude: number; longitude: number; services?: RescueService[] | null }>, ctx: Ctx) =>
      reference(ctx).availability({ latitude: a.latitude, longitude: a.longitude }, a.services),
    rescueProviders: (_: unknown, a: Args<{ reqId: string; sessionId?: string | null }>, ctx: Ctx) => rescues(ctx).providers(a.reqId, a.sessionId),
    rescueEta: (_: unknown, a: Args<{ reqId: string; sessionId?: string | null }>, ctx: Ctx) => rescues(ctx).eta(a.reqId, a.sessionId),
    rescueProvisioning: async (_: unknown, a: ProvisioningKey, ctx: Ctx) => {
      try {
        return provisioning(await members(ctx).get(a));
      } catch (error) {
        if ((error as { code?: string }).code === 'NOT_FOUND') return null;
        throw error;
      }
    },
    providerFiles: (_: unknown, a: Args<{ filter: FileFilter }>, ctx: Ctx) => files(ctx).search(a.filter),
    providerFile: async (_: unknown, a: Args<{ contentId: string }>, ctx: Ctx) => {
      try {
        return await files(ctx).get(a.contentId);
      } catch (error) {
        if ((error as { code?: string }).code === 'NOT_FOUND') return null;
        throw error;
      }
    },
  },
  Mutation: {
    startRescueSession: async (_: unknown, a: Args<{ input: SessionInput }>, ctx: Ctx) => (await sessions(ctx).start(a.input)).session,
    quoteRescue: (_: unknown, a: Args<{ input: QuoteRequest }>, ctx: Ctx) => rescues(ctx).quote(a.input),
    dispatchRescue: (_: unknown, a: Args<{ service: RescueService; input: DispatchInput }>, ctx: Ctx) => rescues(ctx).dispatch(a.service, a.input),
    updateRescueStatus: async (_: unknown, a: Args<{ input: StatusUpdateInput }>, ctx: Ctx) =>
      ack(`Rescue is ${a.input.status}`)(await rescues(ctx).updateStatus(a.input)),
    cancelRescue: async (_: unknown, a: Args<{ reqId: string; sessionId?: string | null; reason?: string | null }>, ctx: Ctx) =>
      ack('Rescue request cancelled')(await rescues(ctx).cancel(a.reqId, a.sessionId, a.reason)),
    submitRescueFeedback: (_: unknown, a: Args<{ reqId: string; sessionId?: string | null; rating: number; comment?: string | null }>, ctx: Ctx) =>
      rescues(ctx).feedback(a),
    provisionRescueMember: async (_: unknown, a: Args<{ input: ProvisioningKey & ProvisioningFields }>, ctx: Ctx) => {
      const { partnerCode, memberId, assetIntegrationId, ...fields } = a.input;
      return provisioning(await members(ctx).provision({ partnerCode, memberId, assetIntegrationId }, fields));
    },
    updateRescueProvisioning: async (_: unknown, a: Args<ProvisioningKey & { input: ProvisioningFields }>, ctx: Ctx) =>
      provisioning(await members(ctx).update({ partnerCode: a.partnerCode, memberId: a.memberId, assetIntegrationId: a.assetIntegrationId }, a.input)),
    uploadProviderFile: (_: unknown, a: Args<{ input: UploadInput }>, ctx: Ctx) => files(ctx).upload(a.input),
  },
  RescueSession: {
    memberId: async (s: RescueSession, _: unknown, ctx: Ctx) => (s.memberRef ? (await ctx.loaders.memberById.load(s.memberRef))?.memberId ?? null : null),
  },
  RescueRequest: {
    __resolveReference: (ref: { reqId: string }, ctx: Ctx) => ctx.loaders.rescueById.load(ref.reqId),
    cost: (r: RescueRequest) => ({ ...r.cost, payPerUse: r.payPerUse }),
    provider: (r: RescueRequest, _: unknown, ctx: Ctx) => ctx.loaders.providerById.load(r.providerId),
    providerPosition: (r: RescueRequest) => position(r.providerLatitude, r.providerLongitude),
    etaMinutes: (r: RescueRequest) => (done(r) ? null : Math.max(0, Math.ceil((r.etaAt.getTime() - Date.now()) / 60000))),
    etaAt: (r: RescueRequest) => (done(r) ? null : r.etaAt),
    statusHistory: (r: RescueRequest, _: unknown, ctx: Ctx) => ctx.loaders.historyByRescue.load(r.reqId),
    feedback: (r: RescueRequest, _: unknown, ctx: Ctx) => ctx.loaders.feedbackByRescue.load(r.reqId),
    files: (r: RescueRequest, _: unknown, ctx: Ctx) => ctx.loaders.filesByRescue.load(r.reqId),
  },
  RescueStatusEvent: {
    position: (e: RescueStatusEvent) => (e.latitude == null || e.longitude == null ? null : position(e.latitude, e.longitude)),
  },
  RescueProvider: {
    position: (p: RescueProvider) => position(p.latitude, p.longitude),
  },
  RescueTowLocation: {
    position: (l: TowLocation) => position(l.latitude, l.longitude),
  },
  RescueProviderFile: {
    contentBase64: async (f: ProviderFile, _: unknown, ctx: Ctx) => (await files(ctx).content(f)).toString('base64'),
  },
};
