// Nexmark's events, after the benchmark's model (nexmark/nexmark and Beam's generator): an online
// auction house's people, auctions and bids in proportions 1:3:46, at a fixed event rate, bids
// crowding on hot auctions and hot bidders, sellers on hot sellers, each event padded to the
// benchmark's average size. Every event is drawn from the seed and its own id alone, as Beam's
// generator does, so any slice of the stream is the same whoever makes it and in whatever order.
import { random } from '../orders.js';

export interface NexmarkOptions {
  readonly seed: number;
  /** Event time of event 0, in milliseconds since the epoch. */
  readonly baseTimeMs: number;
  /** Event-time rate: event n happens n / eventsPerSecond seconds after event 0. */
  readonly eventsPerSecond: number;
}

export interface Person {
  readonly id: number;
  readonly name: string;
  readonly emailAddress: string;
  readonly creditCard: string;
  readonly city: string;
  readonly state: string;
  readonly dateTime: number;
  readonly extra: string;
}

export interface Auction {
  readonly id: number;
  readonly itemName: string;
  readonly description: string;
  readonly initialBid: number;
  readonly reserve: number;
  readonly dateTime: number;
  readonly expires: number;
  readonly seller: number;
  readonly category: number;
  readonly extra: string;
}

export interface Bid {
  readonly auction: number;
  readonly bidder: number;
  readonly price: number;
  readonly channel: string;
  readonly url: string;
  readonly dateTime: number;
  readonly extra: string;
}

export type NexmarkEvent = { readonly kind: 'person'; readonly person: Person } | { readonly kind: 'auction'; readonly auction: Auction } | { readonly kind: 'bid'; readonly bid: Bid };

/** The event kinds, as the topics they are written to are suffixed. */
export const EVENT_KINDS = ['person', 'auction', 'bid'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const DEFAULT_NEXMARK: NexmarkOptions = { seed: 1, baseTimeMs: Date.UTC(2026, 11, 1), eventsPerSecond: 10_000 };

/** The default events starting an hour ago, on the minute: well within a topic's time retention. */
export function recentNexmark(seed = DEFAULT_NEXMARK.seed): NexmarkOptions {
  return { ...DEFAULT_NEXMARK, seed, baseTimeMs: Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000 };
}

// The benchmark's model: its proportions, hot ratios, active sets and average sizes.
const PERSON_PROPORTION = 1;
const AUCTION_PROPORTION = 3;
const PROPORTION_DENOMINATOR = 50;
const FIRST_PERSON_ID = 1_000;
const FIRST_AUCTION_ID = 1_000;
const FIRST_CATEGORY_ID = 10;
const CATEGORIES = 5;
/** A bid goes to a hot auction (the newest hundred's first) half the time: 1 in HOT_AUCTION_RATIO goes elsewhere. */
const HOT_AUCTION_RATIO = 2;
const HOT_BIDDER_RATIO = 4;
const HOT_SELLER_RATIO = 4;
const HOT_CHANNEL_RATIO = 2;
/** Hot auctions and hot people are every HOT_GROUP-th id. */
const HOT_GROUP = 100;
const ACTIVE_PEOPLE = 1_000;
const IN_FLIGHT_AUCTIONS = 100;
const CHANNELS = 10_000;
const AVERAGE_BYTES: Record<EventKind, number> = { person: 200, auction: 500, bid: 100 };

const HOT_CHANNELS = ['Google', 'Facebook', 'Baidu', 'Apple'];
const FIRST_NAMES = ['Peter', 'Paul', 'Luke', 'John', 'Saul', 'Vicky', 'Kate', 'Julie', 'Sarah', 'Deiter', 'Walter'];
const LAST_NAMES = ['Shultz', 'Abrams', 'Spencer', 'White', 'Bartels', 'Walton', 'Smith', 'Jones', 'Noris'];
const STATES = ['AZ', 'CA', 'ID', 'OR', 'WA', 'WY'];
const CITIES = ['Phoenix', 'Los Angeles', 'San Francisco', 'Boise', 'Portland', 'Bend', 'Redmond', 'Seattle', 'Kent', 'Cheyenne'];

/** The event with id `id` (from 0): a person, an auction or a bid, by its place in the 1:3:46 cycle. */
export function eventAt(id: number, options: NexmarkOptions = DEFAULT_NEXMARK): NexmarkEvent {
  let purpose = 0;
  const draw = () => random(options.seed, id, purpose++);
  const below = (n: number) => Math.floor(draw() * n);
  const dateTime = options.baseTimeMs + Math.floor((id * 1_000) / options.eventsPerSecond);
  const place = id % PROPORTION_DENOMINATOR;
  const cycle = Math.floor(id / PROPORTION_DENOMINATOR);
  if (place < PERSON_PROPORTION) {
    const name = `${FIRST_NAMES[below(FIRST_NAMES.length)]} ${LAST_NAMES[below(LAST_NAMES.length)]}`;
    const person = {
      id: FIRST_PERSON_ID + lastPerson(id),
      name,
      emailAddress: `${letters(draw, 7)}@${letters(draw, 5)}.com`,
      creditCard: Array.from({ length: 4 }, () => String(below(10_000)).padStart(4, '0')).join(' '),
      city: CITIES[below(CITIES.length)] as string,
      state: STATES[below(STATES.length)] as string,
      dateTime,
    };
    return { kind: 'person', person: { ...person, extra: padding(draw, AVERAGE_BYTES.person - approximateBytes(person)) } };
  }
  if (place < PERSON_PROPORTION + AUCTION_PROPORTION) {
    const initialBid = price(draw);
    const seller = draw() * HOT_SELLER_RATIO >= 1 ? Math.floor(lastPerson(id) / HOT_GROUP) * HOT_GROUP : activePerson(id, draw);
    const auction = {
      id: FIRST_AUCTION_ID + cycle * AUCTION_PROPORTION + (place - PERSON_PROPORTION),
      itemName: letters(draw, 20),
      description: letters(draw, 100),
      initialBid,
      reserve: initialBid + price(draw),
      dateTime,
      expires: dateTime + auctionLengthMs(draw, options),
      seller: FIRST_PERSON_ID + seller,
      category: FIRST_CATEGORY_ID + below(CATEGORIES),
    };
    return { kind: 'auction', auction: { ...auction, extra: padding(draw, AVERAGE_BYTES.auction - approximateBytes(auction)) } };
  }
  const newestAuction = cycle * AUCTION_PROPORTION + AUCTION_PROPORTION - 1;
  const auction = draw() * HOT_AUCTION_RATIO >= 1 ? Math.floor(newestAuction / HOT_GROUP) * HOT_GROUP : Math.max(0, newestAuction - below(IN_FLIGHT_AUCTIONS));
  const bidder = draw() * HOT_BIDDER_RATIO >= 1 ? Math.floor(lastPerson(id) / HOT_GROUP) * HOT_GROUP + 1 : activePerson(id, draw);
  const [channel, url] = draw() * HOT_CHANNEL_RATIO >= 1 ? hotChannel(below(HOT_CHANNELS.length), draw) : ordinaryChannel(below(CHANNELS), draw);
  const bid = { auction: FIRST_AUCTION_ID + auction, bidder: FIRST_PERSON_ID + bidder, price: price(draw), channel, url, dateTime };
  return { kind: 'bid', bid: { ...bid, extra: padding(draw, AVERAGE_BYTES.bid - approximateBytes(bid)) } };
}

/** The newest person's id (from 0) when event `id` happens. */
function lastPerson(id: number): number {
  return Math.floor(id / PROPORTION_DENOMINATOR) * PERSON_PROPORTION + Math.min(PERSON_PROPORTION - 1, id % PROPORTION_DENOMINATOR);
}

/** One of the last ACTIVE_PEOPLE people, uniformly. */
function activePerson(id: number, draw: () => number): number {
  return Math.max(0, lastPerson(id) - Math.floor(draw() * ACTIVE_PEOPLE));
}

/** A price in cents, spread over six decades as the benchmark's: from $1 to $1,000,000. */
function price(draw: () => number): number {
  return Math.round(10 ** (draw() * 6) * 100);
}

/** Long enough that about IN_FLIGHT_AUCTIONS auctions are open at once at the event rate. */
function auctionLengthMs(draw: () => number, options: NexmarkOptions): number {
  const betweenAuctionsMs = (1_000 * PROPORTION_DENOMINATOR) / AUCTION_PROPORTION / options.eventsPerSecond;
  return Math.max(1, Math.round(2 * draw() * IN_FLIGHT_AUCTIONS * betweenAuctionsMs));
}

function hotChannel(index: number, draw: () => number): [string, string] {
  const channel = HOT_CHANNELS[index] as string;
  return [channel, `${baseUrl(draw)}?query=1&from=${channel.toLowerCase()}`];
}

/** A channel of the many: its id in the URL, but for one in ten URLs, which lose it. */
function ordinaryChannel(index: number, draw: () => number): [string, string] {
  const url = baseUrl(draw);
  return [`channel-${index}`, draw() * 10 >= 1 ? `${url}?query=1&channel_id=${index}` : `${url}?query=1`];
}

function baseUrl(draw: () => number): string {
  return `https://www.nexmark.com/${letters(draw, 5)}/${letters(draw, 5)}/${letters(draw, 5)}/item.htm`;
}

function letters(draw: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += String.fromCharCode(97 + Math.floor(draw() * 26));
  return text;
}

function padding(draw: () => number, length: number): string {
  return letters(draw, Math.max(0, length));
}

function approximateBytes(fields: object): number {
  return JSON.stringify(fields).length;
}

/** A timestamp as Flink's json format writes TIMESTAMP(3): `2026-12-01 00:00:00.000`, in UTC. */
export function sqlTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** The event as its topic's JSON, times as SQL timestamps. */
export function eventJson(event: NexmarkEvent): string {
  const fields = event.kind === 'person' ? event.person : event.kind === 'auction' ? event.auction : event.bid;
  const timed: Record<string, unknown> = { ...fields, dateTime: sqlTimestamp(fields.dateTime) };
  if (event.kind === 'auction') timed.expires = sqlTimestamp(event.auction.expires);
  return JSON.stringify(timed);
}

export function eventTime(event: NexmarkEvent): number {
  return event.kind === 'person' ? event.person.dateTime : event.kind === 'auction' ? event.auction.dateTime : event.bid.dateTime;
}
