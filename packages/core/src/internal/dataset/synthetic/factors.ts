/**
 * Context factors of the synthetic generator: eight kinds, each with categories of similar-sounding
 * factors (the contrastive factor B is drawn from A's category), and per kind the tasks a user brings
 * and the topics those tasks are about. Tasks and topics are shared by every factor of a kind, so
 * sessions about different factors of one kind use the same vocabulary.
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
  c("person", "colleague", ["my colleague on the design team", "my colleague in finance", "my colleague on the sales team", "my colleague in operations"]),
  c("person", "manager", ["my manager", "my skip-level manager", "my former manager", "the manager of our partner team"]),
  c("person", "client", ["a client I consult for", "a new client of my studio", "my longest-standing client", "a prospective client"]),
  c("person", "family", ["my older sister", "my younger brother", "my cousin", "my sister-in-law"], true),
  c("person", "mentor", ["my thesis advisor", "my mentor from the accelerator program", "my former professor", "my writing mentor"]),
  c("person", "friend", ["a friend from my climbing gym", "my college roommate", "a neighbor I'm friendly with", "a friend from my book club"], true),
  c("person", "teacher", ["my son's math teacher", "my daughter's piano teacher", "my son's soccer coach", "my daughter's homeroom teacher"]),
  c("tool", "e-reader", ["my Kindle Paperwhite", "my Kobo Clara", "my Kobo Libra", "my PocketBook Era"]),
  c("tool", "camera", ["my Fujifilm X-T30 camera", "my Fujifilm X-S20 camera", "my Sony A6400 camera", "my Canon R50 camera"]),
  c("tool", "notes", ["my Notion workspace", "my Obsidian vault", "my Logseq graph", "my Evernote notebooks"]),
  c("tool", "spreadsheet", [
    "my budgeting spreadsheet in Google Sheets",
    "my budgeting spreadsheet in Excel",
    "my meal-planning spreadsheet in Google Sheets",
    "my workout log in Excel"
  ]),
  c("tool", "kitchen", ["my KitchenAid stand mixer", "my Instant Pot", "my Ninja air fryer", "my Breville espresso machine"]),
  c("tool", "music", ["my Ableton Live setup", "my Logic Pro setup", "my FL Studio setup", "my GarageBand setup"]),
  c("tool", "bike", ["my gravel bike", "my road bike", "my e-bike", "my folding commuter bike"]),
  c("organization", "nonprofit", ["the Riverside Food Bank", "the Riverside Tenants' Association", "the Harbor Street Animal Shelter", "the Eastside Literacy Project"]),
  c("organization", "client company", ["our client Brightline Analytics", "our client Brightwater Logistics", "our client Northfield Dental Group", "our client Summit Ridge Realty"]),
  c("organization", "school group", ["the Maple Grove Elementary PTA", "the Maple Grove Middle School PTA", "the Lincoln High robotics boosters", "the Oakwood Montessori parents' council"]),
  c("organization", "club", ["the Cedar Hills Running Club", "the Cedar Hills Cycling Club", "the Westbrook Chess Club", "the Lakeside Rowing Club"]),
  c("organization", "business", ["my startup Fernleaf Labs", "my employer Quartz Health", "my side business Tidewater Candles", "my food co-op Greenway Grocers"]),
  c("organization", "civic", ["the city planning office", "the county parks department", "our homeowners' association", "the neighborhood council"]),
  c("artifact", "report", ["the quarterly revenue report", "the annual budget report", "the monthly churn report", "the quarterly marketing report"]),
  c("artifact", "academic", ["my dissertation's second chapter", "my dissertation's literature review", "my conference paper draft", "my grant proposal to the science foundation"]),
  c("artifact", "career", ["my résumé", "my cover letter for the design lead role", "my portfolio website", "my LinkedIn profile"]),
  c("artifact", "creative", ["my novel manuscript", "my short story for the anthology", "my poetry chapbook", "my screenplay draft"]),
  c("artifact", "work doc", ["the onboarding handbook for new hires", "the incident postmortem", "the product requirements doc for search", "the API migration plan"]),
  c("artifact", "speech", ["my toast for my brother's wedding", "my retirement speech for my boss", "the eulogy for my grandfather", "my keynote for the regional conference"]),
  c("place", "getaway", ["our cabin at Lake Merrow", "our cabin at Lake Tessel", "the beach house we rent in Cape Alder", "my parents' farmhouse in Vermont"]),
  c("place", "garden", ["the community garden plot on Elm Street", "the community garden plot on Birch Avenue", "my backyard vegetable garden", "the rooftop garden at my office"]),
  c("place", "home", ["my studio apartment", "our new two-bedroom apartment", "the basement I'm converting", "my home office"]),
  c("place", "destination", ["my upcoming trip to Lisbon", "my upcoming trip to Porto", "my upcoming trip to Kyoto", "my upcoming trip to Oaxaca"]),
  c("place", "workspace", ["the office kitchen", "our team's shared workspace", "the storage unit I rent", "the workshop in my garage"]),
  c("place", "venue", ["my stall at the Saturday farmers market", "my booth at the Sunday craft fair", "the café where I host open mic nights", "the pop-up shop we run in December"]),
  c("activity", "running", ["training for a half marathon", "training for my first 10K", "training for a trail ultramarathon", "getting back into running after a break"]),
  c("activity", "language", ["learning Japanese", "learning Korean", "learning Portuguese", "brushing up my Spanish"]),
  c("activity", "instrument", ["learning the cello", "learning the viola", "learning jazz piano", "learning fingerstyle guitar"]),
  c("activity", "baking", ["sourdough baking", "baking French pastries", "cake decorating", "making fresh pasta"]),
  c("activity", "climbing", ["indoor bouldering", "outdoor sport climbing", "lead climbing at the gym", "hangboard training"]),
  c("activity", "craft", ["woodworking", "pottery on the wheel", "knitting sweaters", "watercolor painting"]),
  c("event", "wedding", ["my sister's wedding", "my cousin's wedding", "my best friend's wedding", "our own wedding next spring"]),
  c("event", "launch", ["the spring product launch", "the fall product launch", "the launch of our mobile app", "our store's grand opening"]),
  c("event", "offsite", ["our team offsite in March", "the leadership offsite in June", "the company retreat in September", "the engineering hackathon"]),
  c("event", "birthday", ["my dad's 60th birthday party", "my mom's 60th birthday party", "my daughter's 8th birthday party", "my grandmother's 90th birthday"]),
  c("event", "conference", ["the regional data science conference", "the national teachers' conference", "the design conference in Berlin", "the annual industry trade show"]),
  c("event", "competition", ["the city marathon in October", "the regional science fair", "the chess tournament in May", "the baking competition at the county fair"]),
  c("media", "podcast", ["my podcast Second Helpings", "my podcast Second Opinions", "my podcast Side Quests", "my podcast Small Wins"]),
  c("media", "newsletter", ["my newsletter The Weekly Sprout", "my newsletter The Weekly Ledger", "my newsletter Field Notes", "my newsletter Margin Notes"]),
  c("media", "video", ["my YouTube cooking channel", "my YouTube woodworking channel", "my YouTube channel about budget travel", "my YouTube channel about board games"]),
  c("media", "blog", ["my travel blog", "my gardening blog", "my personal finance blog", "my parenting blog"]),
  c("media", "book club", ["the novel our book club is reading", "the memoir our book club picked", "the mystery series our book club is reading", "the poetry collection our book club chose"]),
  c("media", "social", ["my Instagram account for my bakery", "my Instagram account for my pottery", "my TikTok account about cooking", "my Pinterest boards for home decor"])
]

export const kinds: ReadonlyArray<FactorKind> = ["person", "tool", "organization", "artifact", "place", "activity", "event", "media"]

/** More first names than a persona can have people (7 categories x 4 roles), so a draw always finds a free one. */
export const firstNames: ReadonlyArray<string> = [
  "Priya", "Marco", "Dana", "Tomás", "Aisha", "Kenji", "Lena", "Omar", "Grace", "Mateo", "Nadia", "Felix",
  "Ruth", "Jonah", "Mei", "Samuel", "Ines", "Viktor", "Hana", "Diego", "Clara", "Kwame", "Sofia", "Elliot",
  "Yusuf", "Leila", "Anton", "Beatriz", "Rohan", "Freya", "Malik", "Josephine", "Emeka", "Ingrid"
]

export const lastNames: ReadonlyArray<string> = [
  "Raman", "Ruiz", "Whitfield", "Okafor", "Brennan", "Tanaka", "Lindqvist", "Haddad", "Moreau", "Castillo",
  "Novak", "Osei", "Fischer", "Kowalski", "Chen", "Abbott", "Duarte", "Petrov", "Sato", "Morales", "Keller",
  "Mensah", "Ricci", "Walsh"
]

export const kindBanks: Readonly<Record<FactorKind, KindBank>> = {
  person: {
    tasks: [
      "write a message to {f} about {t}",
      "prepare for a conversation with {f} about {t}",
      "put together notes for my meeting with {f} on {t}",
      "reply to {f}, who asked me about {t}",
      "plan how to bring up {t} with {f}"
    ],
    topics: ["the project timeline slipping", "splitting up the workload", "a budget request", "next month's schedule", "feedback on a recent draft", "a mistake I made last week", "taking some time off", "a new idea I want to pitch"]
  },
  tool: {
    tasks: [
      "set up {f} for {t}",
      "figure out how to use {f} for {t}",
      "troubleshoot {f}, which keeps acting up during {t}",
      "get more out of {f} for {t}",
      "choose the right settings on {f} for {t}"
    ],
    topics: ["a weekend project", "everyday use", "an upcoming trip", "working from home", "sharing with my family", "a tight budget", "long sessions", "getting started"]
  },
  organization: {
    tasks: [
      "draft an announcement for {f} about {t}",
      "write a proposal to {f} about {t}",
      "plan a meeting with {f} about {t}",
      "put together an update for {f} on {t}",
      "respond to a request from {f} about {t}"
    ],
    topics: ["the spring fundraiser", "recruiting new volunteers", "a schedule change", "this year's budget", "a partnership idea", "last quarter's results", "a complaint we received", "the upcoming deadline"]
  },
  artifact: {
    tasks: [
      "revise {f}, especially {t}",
      "get feedback on {f}, mainly {t}",
      "restructure {f} around {t}",
      "write the part of {f} that covers {t}",
      "tighten up {f}, starting with {t}"
    ],
    topics: ["the introduction", "the part about methods", "the conclusion", "the summary at the top", "the section on costs", "the timeline section", "the opening paragraph", "the list of recommendations"]
  },
  place: {
    tasks: [
      "plan a weekend at {f} around {t}",
      "organize {f} for {t}",
      "sort out {t} at {f}",
      "make a plan for {f} covering {t}",
      "get {f} ready for {t}"
    ],
    topics: ["guests coming over", "the change of season", "a tight budget", "storage space", "a long stay", "some repairs", "a small party", "the cleaning routine"]
  },
  activity: {
    tasks: [
      "make a plan for {f} that fits {t}",
      "get past a plateau in {f}, mostly around {t}",
      "build a routine for {f} around {t}",
      "figure out what to focus on next in {f}, given {t}",
      "track my progress in {f} with {t} in mind"
    ],
    topics: ["a busy work schedule", "a minor injury", "limited equipment", "a goal three months out", "motivation dipping", "only weekends free", "a new coach", "last month's slow progress"]
  },
  event: {
    tasks: [
      "plan the details of {f}, starting with {t}",
      "write something to send out for {f} about {t}",
      "prepare for {f}, especially {t}",
      "sort out {t} for {f}",
      "put together a checklist for {f} covering {t}"
    ],
    topics: ["the guest list", "the budget", "the schedule for the day", "the invitations", "a speech", "travel and lodging", "food and drinks", "what could go wrong"]
  },
  media: {
    tasks: [
      "outline the next installment of {f} about {t}",
      "write a short description for {f} about {t}",
      "brainstorm ideas for {f} around {t}",
      "answer audience feedback on {f} about {t}",
      "plan the next month of {f} around {t}"
    ],
    topics: ["a guest interview", "audience questions", "a recent controversy", "a behind-the-scenes look", "a beginner's guide", "a season wrap-up", "a collaboration", "a reader's story"]
  }
}
