/**
 * Context factors of the synthetic generator: eight kinds, each with categories of similar-sounding
 * factors (the contrastive factor B is drawn from A's category), and per kind the tasks a user brings
 * and the topics those tasks are about. Tasks and topics are shared by every factor of a kind, so
 * sessions about different factors of one kind use the same vocabulary. The per-kind banks and the
 * people's names are in names.ts.
 */
export type FactorKind = "person" | "tool" | "organization" | "artifact" | "place" | "activity" | "event" | "media"

export interface Category {
  readonly kind: FactorKind
  readonly name: string
  /** Factor labels; for people, role phrases combined with a generated name. */
  readonly variants: ReadonlyArray<string>
  /** People in this category go by first name only (family, friends). */
  readonly firstNameOnly?: boolean
}

export interface KindBank {
  /** Task phrases completing "Can you help me ...": `{f}` is the factor as mentioned, `{t}` a topic. */
  readonly tasks: ReadonlyArray<string>
  readonly topics: ReadonlyArray<string>
}

const c = (kind: FactorKind, name: string, variants: ReadonlyArray<string>, firstNameOnly = false): Category =>
  firstNameOnly ? { kind, name, variants, firstNameOnly } : { kind, name, variants }

export const categories: ReadonlyArray<Category> = [
  c("person", "colleague", [
    "my colleague on the design team",
    "my colleague in finance",
    "my colleague on the sales team",
    "my colleague in operations"
  ]),
  c("person", "manager", [
    "my manager",
    "my skip-level manager",
    "my former manager",
    "the manager of our partner team"
  ]),
  c("person", "client", [
    "a client I consult for",
    "a new client of my studio",
    "my longest-standing client",
    "a prospective client"
  ]),
  c("person", "family", ["my older sister", "my younger brother", "my cousin", "my sister-in-law"], true),
  c("person", "mentor", [
    "my thesis advisor",
    "my mentor from the accelerator program",
    "my former professor",
    "my writing mentor"
  ]),
  c(
    "person",
    "friend",
    [
      "a friend from my climbing gym",
      "my college roommate",
      "a neighbor I'm friendly with",
      "a friend from my book club"
    ],
    true
  ),
  c("person", "teacher", [
    "my son's math teacher",
    "my daughter's piano teacher",
    "my son's soccer coach",
    "my daughter's homeroom teacher"
  ]),
  c("tool", "e-reader", [
    "my Kindle Paperwhite e-reader",
    "my Kobo Clara e-reader",
    "my Kobo Libra e-reader",
    "my PocketBook Era e-reader"
  ]),
  c("tool", "camera", [
    "my Fujifilm X-T30 camera",
    "my Fujifilm X-S20 camera",
    "my Sony A6400 camera",
    "my Canon R50 camera"
  ]),
  c("tool", "notes", ["my notes in Notion", "my notes in Obsidian", "my notes in Logseq", "my notes in Evernote"]),
  c("tool", "spreadsheet", [
    "my budgeting spreadsheet in Google Sheets",
    "my budgeting spreadsheet in Excel",
    "my meal-planning spreadsheet in Google Sheets",
    "my workout spreadsheet in Excel"
  ]),
  c("tool", "espresso", [
    "my Breville espresso machine",
    "my Gaggia espresso machine",
    "my De'Longhi espresso machine",
    "my Rancilio espresso machine"
  ]),
  c("tool", "music", ["my Ableton Live setup", "my Logic Pro setup", "my FL Studio setup", "my GarageBand setup"]),
  c("tool", "bike", ["my gravel bike", "my road bike", "my e-bike", "my folding commuter bike"]),
  c("organization", "nonprofit", [
    "the Riverside Food Bank",
    "the Riverside Tenants' Association",
    "the Riverside Animal Shelter",
    "the Riverside Literacy Project"
  ]),
  c("organization", "client company", [
    "our client Brightline Analytics",
    "our client Brightwater Logistics",
    "our client Northfield Dental Group",
    "our client Summit Ridge Realty"
  ]),
  c("organization", "school group", [
    "the Maple Grove Elementary PTA",
    "the Maple Grove Middle School PTA",
    "the Lincoln Elementary PTA",
    "the Oakwood Elementary PTA"
  ]),
  c("organization", "club", [
    "the Cedar Hills Running Club",
    "the Cedar Hills Cycling Club",
    "the Westbrook Chess Club",
    "the Lakeside Rowing Club"
  ]),
  c("organization", "business", [
    "my bakery business Tidewater Breads",
    "my candle business Tidewater Candles",
    "my consulting business Quartz Advisory",
    "my catering business Greenway Kitchen"
  ]),
  c("organization", "civic", [
    "the city planning office",
    "the city parks department",
    "the city housing office",
    "the city transit board"
  ]),
  c("artifact", "report", [
    "the quarterly revenue report",
    "the annual budget report",
    "the monthly churn report",
    "the quarterly marketing report"
  ]),
  c("artifact", "academic", [
    "my dissertation's second chapter",
    "my dissertation's literature review",
    "my dissertation's methods chapter",
    "my dissertation's concluding chapter"
  ]),
  c("artifact", "career", [
    "my résumé for the design lead role",
    "my cover letter for the design lead role",
    "my résumé for the product manager role",
    "my cover letter for the product manager role"
  ]),
  c("artifact", "creative", [
    "my novel manuscript",
    "my novella manuscript",
    "my memoir manuscript",
    "my short story manuscript"
  ]),
  c("artifact", "work doc", [
    "the onboarding handbook for new hires",
    "the onboarding handbook for managers",
    "the onboarding guide for contractors",
    "the onboarding checklist for interns"
  ]),
  c("artifact", "speech", [
    "my toast for my brother's wedding",
    "my toast for my best friend's wedding",
    "my toast for my parents' anniversary",
    "my toast for my colleague's retirement"
  ]),
  c("place", "getaway", [
    "our cabin at Lake Merrow",
    "our cabin at Lake Tessel",
    "our cabin near Pine Ridge",
    "our cabin on Alder Island"
  ]),
  c("place", "garden", [
    "the community garden plot on Elm Street",
    "the community garden plot on Birch Avenue",
    "my backyard vegetable garden",
    "the rooftop garden at my office"
  ]),
  c("place", "home", [
    "my studio apartment",
    "our new two-bedroom apartment",
    "my parents' apartment",
    "the apartment I'm subletting"
  ]),
  c("place", "destination", [
    "my upcoming trip to Lisbon",
    "my upcoming trip to Porto",
    "my upcoming trip to Kyoto",
    "my upcoming trip to Oaxaca"
  ]),
  c("place", "workspace", [
    "the workshop in my garage",
    "the workshop at the makerspace",
    "the shared workshop at my studio",
    "the pottery workshop I rent"
  ]),
  c("place", "venue", [
    "my stall at the Saturday farmers market",
    "my stall at the Sunday farmers market",
    "my stall at the winter craft market",
    "my stall at the night market"
  ]),
  c("activity", "running", [
    "training for a half marathon",
    "training for my first 10K",
    "training for a trail ultramarathon",
    "training for a 5K with my kids"
  ]),
  c("activity", "language", ["learning Japanese", "learning Korean", "learning Portuguese", "learning Spanish"]),
  c("activity", "instrument", [
    "learning the cello",
    "learning the viola",
    "learning jazz piano",
    "learning fingerstyle guitar"
  ]),
  c("activity", "baking", [
    "sourdough baking",
    "baking French pastries",
    "baking layer cakes",
    "baking bagels at home"
  ]),
  c("activity", "climbing", [
    "climbing at the bouldering gym",
    "outdoor sport climbing",
    "lead climbing at the gym",
    "climbing on my home wall"
  ]),
  c("activity", "craft", ["my woodworking class", "my pottery class", "my knitting class", "my watercolor class"]),
  c("event", "wedding", [
    "my sister's wedding",
    "my cousin's wedding",
    "my best friend's wedding",
    "our own wedding next spring"
  ]),
  c("event", "launch", [
    "the spring product launch",
    "the fall product launch",
    "the launch of our mobile app",
    "the launch of our new website"
  ]),
  c("event", "offsite", [
    "our team offsite in March",
    "the leadership offsite in June",
    "the sales team offsite in September",
    "the engineering offsite in November"
  ]),
  c("event", "birthday", [
    "my dad's 60th birthday party",
    "my mom's 60th birthday party",
    "my daughter's 8th birthday party",
    "my grandmother's 90th birthday"
  ]),
  c("event", "conference", [
    "the regional data science conference",
    "the national teachers' conference",
    "the design conference in Berlin",
    "the annual industry conference"
  ]),
  c("event", "competition", [
    "the regional chess tournament",
    "the city chess tournament",
    "the school chess tournament",
    "the online chess tournament"
  ]),
  c("media", "podcast", [
    "my podcast Second Helpings",
    "my podcast Second Opinions",
    "my podcast Side Quests",
    "my podcast Small Wins"
  ]),
  c("media", "newsletter", [
    "my newsletter The Weekly Sprout",
    "my newsletter The Weekly Ledger",
    "my newsletter Field Notes",
    "my newsletter Margin Notes"
  ]),
  c("media", "video", [
    "my YouTube cooking channel",
    "my YouTube woodworking channel",
    "my YouTube channel about budget travel",
    "my YouTube channel about board games"
  ]),
  c("media", "blog", ["my travel blog", "my gardening blog", "my personal finance blog", "my parenting blog"]),
  c("media", "book club", [
    "the novel our book club is reading",
    "the memoir our book club picked",
    "the mystery series our book club is reading",
    "the poetry collection our book club chose"
  ]),
  c("media", "social", [
    "my Instagram account for my bakery",
    "my Instagram account for my pottery",
    "my Instagram account about cooking",
    "my Instagram account for home decor"
  ])
]

export const kinds: ReadonlyArray<FactorKind> = [
  "person",
  "tool",
  "organization",
  "artifact",
  "place",
  "activity",
  "event",
  "media"
]
