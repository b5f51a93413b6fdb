import type { SubgraphContext } from '../platform/context.ts';
import { sandboxResetPart } from '../platform/db/sandbox-reset.ts';
import { bookingStatus, type BookingStatus } from './entities.ts';
import type { BookingLoaders, BookingRow, VehicleRow } from './loaders.ts';
import { checkPageSize, decodeCursor, encodeCursor, type Page } from './paging.ts';
import { BookingService, normaliseVin, type BookingFilter, type StartBookingInput } from './service.ts';

type Ctx = SubgraphContext<BookingLoaders>;
interface PageArgs { first?: number | null; after?: string | null; status?: BookingStatus | null }

const service = (ctx: Ctx) => new BookingService(ctx.em);

const cursorOf = (node: BookingRow) => encodeCursor({ start: node.startTimestamp, bookingId: node.bookingId });

/** The connection shape of a page; cursors are made only when asked (a page of `nodes` needs none). */
const connection = (page: Page<BookingRow>) => ({
  get edges() { return page.rows.map((node) => ({ node, cursor: cursorOf(node) })); },
  nodes: page.rows,
  pageInfo: {
    hasNextPage: page.hasNextPage,
    get endCursor() { const last = page.rows.at(-1); return last ? cursorOf(last) : null; },
  },
});

/** A nested list hop: validated arguments, then the grouped loader (one statement for all parents). */
const pageKey = (parent: string, args: PageArgs) => ({
  parent, first: checkPageSize(args.first), after: decodeCursor(args.after), status: args.status ?? null,
});

export const resolvers = {
  SandboxReset: sandboxResetPart('booking'),
  Query: {
    vehicle: (_: unknown, { vin }: { vin: string }, ctx: Ctx) => ctx.loaders.vehicleByVin.load(normaliseVin(vin)),
    booking: (_: unknown, { bookingId }: { bookingId: string }, ctx: Ctx) => ctx.loaders.bookingById.load(bookingId),
    bookings: async (_: unknown, a: { filter?: BookingFilter | null; first?: number | null; after?: string | null }, ctx: Ctx) =>
      connection(await service(ctx).listBookings(a.filter, a.first, a.after)),
  },
  Mutation: {
    createVehicle: (_: unknown, a: { vin: string; deviceId?: string | null }, ctx: Ctx) => service(ctx).createVehicle(a.vin, a.deviceId),
    pairDevice: (_: unknown, a: { vin: string; deviceId: string }, ctx: Ctx) => service(ctx).pairDevice(a.vin, a.deviceId),
    startBooking: (_: unknown, { input }: { input: StartBookingInput }, ctx: Ctx) => service(ctx).startBooking(input),
    endBooking: (_: unknown, a: { bookingId: string; actualEndTimestamp: number }, ctx: Ctx) =>
      service(ctx).endBooking(a.bookingId, a.actualEndTimestamp),
  },
  Vehicle: {
    __resolveReference: (ref: { vin: string }, ctx: Ctx) => ctx.loaders.vehicleByVin.load(String(ref.vin).toUpperCase()),
    VIN: (v: VehicleRow) => v.vin,
    deviceID: (v: VehicleRow) => v.deviceId,
    bookings: async (v: VehicleRow, args: PageArgs, ctx: Ctx) => connection(await ctx.loaders.bookingsByVin.load(pageKey(v.vin, args))),
  },
  Booking: {
    __resolveReference: (ref: { bookingId: string }, ctx: Ctx) => ctx.loaders.bookingById.load(ref.bookingId),
    bookingID: (b: BookingRow) => b.bookingId,
    VIN: (b: BookingRow) => b.vin,
    userID: (b: BookingRow) => b.userId,
    deviceID: (b: BookingRow) => b.deviceId,
    status: (b: BookingRow) => bookingStatus(b),
    vehicle: (b: BookingRow, _: unknown, ctx: Ctx) => ctx.loaders.vehicleByVin.load(b.vin),
  },
  User: {
    __resolveReference: (ref: { userId: string }) => ({ userId: ref.userId }),
    bookings: async (u: { userId: string }, args: PageArgs, ctx: Ctx) => connection(await ctx.loaders.bookingsByUser.load(pageKey(u.userId, args))),
  },
};
