import AppStoreModels
import Entitlements

/// The named lifecycles. Days count from 2026-01-01; "months" are 30 days unless a scenario
/// is about calendar arithmetic. Facts become visible at their signed date.
enum ScenarioTable {
    typealias F = Fixture

    static let all: [Scenario] =
        subscriptions + billing + revocations + productChanges + offers + oneTime + money + misc

    static let subscriptions: [Scenario] = [
        Scenario(
            "new subscription is active until its expiry",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 29.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "renewal extends access",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t2", "monthly", 30, 60, reason: .renewal),
                F.ri("monthly", signed: 0),
            ],
            checks: [
                Check(
                    at: 15.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 45.0,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "RENEWAL/t2@d30 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "renewal charged a day early is still a renewal",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t2", "monthly", 29, 60, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 29.5,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "RENEWAL/t2@d29 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "RENEWAL/t2@d29 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "auto-renew off then expiry (voluntary)",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0), F.ri("monthly", signed: 10, autoRenew: false),
                F.ri("monthly", signed: 30, autoRenew: false, intent: 1), F.note(.expired, .voluntary, signed: 30),
            ],
            checks: [
                Check(
                    at: 5.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL no-renew unsub=d10"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=CUSTOMER_CANCELLED"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "auto-renew off and back on (uncancellation)",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0), F.ri("monthly", signed: 10, autoRenew: false),
                F.ri("monthly", signed: 12, autoRenew: true), F.tx("t2", "monthly", 30, 60, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL no-renew unsub=d10"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 13.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "UNCANCELLATION/t1/1768262400000@d12",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "UNCANCELLATION/t1/1768262400000@d12",
                        "RENEWAL/t2@d30 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "cancel twice in one period gives two cancellation ids",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 2, autoRenew: false),
                F.ri("monthly", signed: 4, autoRenew: true), F.ri("monthly", signed: 6, autoRenew: false),
            ],
            checks: [
                Check(
                    at: 7.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL no-renew unsub=d6"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1767398400000@d2",
                        "UNCANCELLATION/t1/1767571200000@d4",
                        "CANCELLATION/t1/1767744000000@d6",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=CUSTOMER_CANCELLED"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1767398400000@d2",
                        "UNCANCELLATION/t1/1767571200000@d4",
                        "CANCELLATION/t1/1767744000000@d6",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "expiry without any renewal info: reason unknown",
            facts: [
                F.tx("t1", "monthly", 0, 30)
            ],
            checks: [
                Check(
                    at: 29.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 30.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=UNKNOWN"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "EXPIRATION/t1@d30 UNKNOWN",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "trial started and converted",
            facts: [
                F.tx("t1", "monthly", 0, 7, period: .trial), F.ri("monthly", signed: 0),
                F.tx("t2", "monthly", 7, 37, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d7 TRIAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0"
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
                Check(
                    at: 8.0,
                    entitlements: [
                        "pro active monthly until=d37 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0",
                        "TRIAL_CONVERTED/t2@d7 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
            ]),
        Scenario(
            "trial cancelled then expires",
            facts: [
                F.tx("t1", "monthly", 0, 7, period: .trial), F.ri("monthly", signed: 3, autoRenew: false),
            ],
            checks: [
                Check(
                    at: 4.0,
                    entitlements: [
                        "pro active monthly until=d7 TRIAL no-renew unsub=d3"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0",
                        "TRIAL_CANCELLED/t1/1767484800000@d3",
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
                Check(
                    at: 8.0,
                    entitlements: [
                        "pro inactive monthly until=d7 TRIAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=CUSTOMER_CANCELLED"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0",
                        "TRIAL_CANCELLED/t1/1767484800000@d3",
                        "EXPIRATION/t1@d7 CUSTOMER_CANCELLED",
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
            ]),
        Scenario(
            "resubscribe after expiry: new period, same original transaction",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, autoRenew: false),
                F.tx("t2", "monthly", 50, 80, reason: .purchase), F.ri("monthly", signed: 50),
            ],
            checks: [
                Check(
                    at: 40.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=CUSTOMER_CANCELLED"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 51.0,
                    entitlements: [
                        "pro active monthly until=d80 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                        "RENEWAL/t2@d50 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "resubscribe to another product of the group",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, autoRenew: false),
                F.tx("t2", "yearly", 45, 410, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 46.0,
                    entitlements: [
                        "pro active yearly until=d410 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=CUSTOMER_CANCELLED",
                        "yearly ACTIVE tx=t2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                        "RENEWAL/t2@d45 proceeds=55993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=79990 fee=30% proceeds=55993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "renewal date extended (RENEWAL_EXTENDED)",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t1", "monthly", 0, 37, signed: 20),
                F.note(.renewalExtended, signed: 20),
            ],
            checks: [
                Check(
                    at: 19.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 33.0,
                    entitlements: [
                        "pro active monthly until=d37 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "SUBSCRIPTION_EXTENDED/t1/1770422400000@d20",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 38.0,
                    entitlements: [
                        "pro inactive monthly until=d37 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=UNKNOWN"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "SUBSCRIPTION_EXTENDED/t1/1770422400000@d20",
                        "EXPIRATION/t1@d37 UNKNOWN",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
    ]

    static let billing: [Scenario] = [
        Scenario(
            "billing retry without grace: no access, not churned",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true),
                F.note(.didFailToRenew, signed: 30.1),
            ],
            checks: [
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 89.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 91.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=BILLING_ERROR"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "billing grace period keeps access until it ends",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true, grace: 36),
                F.note(.didFailToRenew, .gracePeriod, signed: 30.1),
            ],
            checks: [
                Check(
                    at: 32.0,
                    entitlements: [
                        "pro active monthly until=d36 NORMAL renews billing=d30 grace=d36"
                    ],
                    subscriptions: [
                        "monthly IN_GRACE_PERIOD tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 37.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "EXPIRATION/t1@d36 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "billing recovered inside the grace period keeps the renewal date",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true, grace: 36),
                F.note(.didFailToRenew, .gracePeriod, signed: 30.1),
                F.tx("t2", "monthly", 30, 60, signed: 33, reason: .renewal),
                F.note(.didRenew, .billingRecovery, signed: 33, transaction: "t2"),
            ],
            checks: [
                Check(
                    at: 32.0,
                    entitlements: [
                        "pro active monthly until=d36 NORMAL renews billing=d30 grace=d36"
                    ],
                    subscriptions: [
                        "monthly IN_GRACE_PERIOD tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 34.0,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        // Reported at d32; the recovery does not undo it (issue 17: the whole
                        // story's facts imply what its first part did).
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "BILLING_RECOVERED/t2@d30",
                        "RENEWAL/t2@d30 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "GRACE_PERIOD_EXPIRED ends access early",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true, grace: 46),
                F.note(.gracePeriodExpired, signed: 40),
            ],
            checks: [
                Check(
                    at: 39.0,
                    entitlements: [
                        "pro active monthly until=d46 NORMAL renews billing=d30 grace=d46"
                    ],
                    subscriptions: [
                        "monthly IN_GRACE_PERIOD tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 41.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "EXPIRATION/t1@d40 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "billing recovered during grace period",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true, grace: 36),
                F.tx("t2", "monthly", 33, 60, reason: .renewal), F.ri("monthly", signed: 33),
            ],
            checks: [
                Check(
                    at: 32.0,
                    entitlements: [
                        "pro active monthly until=d36 NORMAL renews billing=d30 grace=d36"
                    ],
                    subscriptions: [
                        "monthly IN_GRACE_PERIOD tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 34.0,
                    entitlements: [
                        "pro active monthly until=d60 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "BILLING_RECOVERED/t2@d33",
                        "RENEWAL/t2@d33 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "billing recovered after grace, in retry",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true, grace: 36),
                F.tx("t2", "monthly", 50, 80, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 40.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "EXPIRATION/t1@d36 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 51.0,
                    entitlements: [
                        "pro active monthly until=d80 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "GRACE_PERIOD_STARTED/t1@d30",
                        "EXPIRATION/t1@d36 BILLING_ERROR",
                        "BILLING_RECOVERED/t2@d50",
                        "RENEWAL/t2@d50 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "billing retry ends with EXPIRED (BILLING_RETRY)",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 30.1, retry: true),
                F.ri("monthly", signed: 50, retry: false, intent: 2), F.note(.expired, .billingRetry, signed: 50),
            ],
            checks: [
                Check(
                    at: 49.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL renews billing=d30"
                    ],
                    subscriptions: [
                        "monthly IN_BILLING_RETRY tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 51.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=BILLING_ERROR"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "legacy recovery without transactionReason is read from the retry",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 31, retry: true),
                F.tx("t2", "monthly", 40, 70),
            ],
            checks: [
                Check(
                    at: 41.0,
                    entitlements: [
                        "pro active monthly until=d70 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "BILLING_ISSUE/t1@d30",
                        "EXPIRATION/t1@d30 BILLING_ERROR",
                        "BILLING_RECOVERED/t2@d40",
                        "RENEWAL/t2@d40 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "trial converts after a billing issue",
            facts: [
                F.tx("t1", "monthly", 0, 7, period: .trial), F.ri("monthly", signed: 7.1, retry: true, grace: 13),
                F.tx("t2", "monthly", 9, 37, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 8.0,
                    entitlements: [
                        "pro active monthly until=d13 TRIAL renews billing=d7 grace=d13"
                    ],
                    subscriptions: [
                        "monthly IN_GRACE_PERIOD tx=t1"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0",
                        "BILLING_ISSUE/t1@d7",
                        "GRACE_PERIOD_STARTED/t1@d7",
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
                Check(
                    at: 10.0,
                    entitlements: [
                        "pro active monthly until=d37 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "TRIAL_STARTED/t1@d0",
                        "BILLING_ISSUE/t1@d7",
                        "GRACE_PERIOD_STARTED/t1@d7",
                        "BILLING_RECOVERED/t2@d9",
                        "TRIAL_CONVERTED/t2@d9 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=0 fee=0% proceeds=0",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ]),
            ]),
    ]

    static let revocations: [Scenario] = [
        Scenario(
            "refund for a developer issue removes access at the revocation date",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx(
                    "t1", "monthly", 0, 30, signed: 10, revokedAt: 10, revocationReason: 1, revocationType: .refundFull),
                F.note(.refund, signed: 10),
            ],
            checks: [
                Check(
                    at: 9.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro inactive monthly until=d10 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly REFUNDED tx=t1 revoked=REFUND@d10:DEVELOPER_ISSUE"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1768089600000@d10 DEVELOPER_ISSUE proceeds=-6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "refund for another reason keeps reason 0",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx("t1", "monthly", 0, 30, signed: 12, revokedAt: 12, revocationReason: 0),
            ],
            checks: [
                Check(
                    at: 13.0,
                    entitlements: [
                        "pro inactive monthly until=d12 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly REFUNDED tx=t1 revoked=REFUND@d12:OTHER"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1768262400000@d12 OTHER proceeds=-6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "refund reversed restores access",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx("t1", "monthly", 0, 30, signed: 10, revokedAt: 10, revocationReason: 0),
                F.tx("t1", "monthly", 0, 30, signed: 15), F.note(.refundReversed, signed: 15),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro inactive monthly until=d10 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly REFUNDED tx=t1 revoked=REFUND@d10:OTHER"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1768089600000@d10 OTHER proceeds=-6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 16.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1768089600000@d10 OTHER proceeds=-6993",
                        "REFUND_REVERSED/t1/1768521600000@d15 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "prorated refund takes back part of the money",
            facts: [
                F.tx("t1", "yearly", 0, 365),
                F.tx(
                    "t1", "yearly", 0, 365, signed: 100, revokedAt: 100, revocationReason: 0,
                    revocationType: .refundProrated, revocationPercentage: 50000),
            ],
            checks: [
                Check(
                    at: 101.0,
                    entitlements: [
                        "pro inactive yearly until=d100 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "yearly REFUNDED tx=t1 revoked=REFUND@d100:OTHER"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=55993",
                        "REFUND/t1/1775865600000@d100 OTHER proceeds=-27997",
                    ],
                    revenue: [
                        "t1 price=79990 fee=30% proceeds=55993 refunded=39995 net=27996"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "family shared subscription grants access without revenue",
            facts: [
                F.tx("f1", "monthly", 0, 30, original: "of", family: true), F.ri("monthly", signed: 0, original: "of"),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews family"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=f1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0"
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "REVOKE removes a family member's access: revocation, not refund",
            facts: [
                F.tx("f1", "monthly", 0, 30, original: "of", family: true),
                F.tx(
                    "f1", "monthly", 0, 30, original: "of", signed: 10, family: true, revokedAt: 10,
                    revocationReason: 0,
                    revocationType: .familyRevoke),
                F.note(.revoke, signed: 10, original: "of"),
            ],
            checks: [
                Check(
                    at: 9.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews family"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=f1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0"
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro inactive monthly until=d10 NORMAL no-renew family"
                    ],
                    subscriptions: [
                        "monthly REVOKED tx=f1 revoked=FAMILY_SHARING_REVOKED@d10"
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0",
                        "FAMILY_SHARING_REVOKED/f1/1768089600000@d10",
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "own purchase is unaffected by a family revocation",
            facts: [
                F.tx("t1", "yearly", 0, 365), F.tx("f1", "monthly", 0, 30, original: "of", family: true),
                F.tx(
                    "f1", "monthly", 0, 30, original: "of", signed: 10, family: true, revokedAt: 10, revocationReason: 0
                ),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro active yearly until=d365 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly REVOKED tx=f1 revoked=FAMILY_SHARING_REVOKED@d10",
                        "yearly ACTIVE tx=t1",
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0",
                        "INITIAL_PURCHASE/t1@d0 proceeds=55993",
                        "FAMILY_SHARING_REVOKED/f1/1768089600000@d10",
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0",
                        "t1 price=79990 fee=30% proceeds=55993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "refund then resubscribe",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx("t1", "monthly", 0, 30, signed: 5, revokedAt: 5, revocationReason: 0),
                F.tx("t2", "monthly", 8, 38, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 6.0,
                    entitlements: [
                        "pro inactive monthly until=d5 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly REFUNDED tx=t1 revoked=REFUND@d5:OTHER"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1767657600000@d5 OTHER proceeds=-6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 9.0,
                    entitlements: [
                        "pro active monthly until=d38 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1767657600000@d5 OTHER proceeds=-6993",
                        "RENEWAL/t2@d8 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
    ]

    static let productChanges: [Scenario] = [
        Scenario(
            "upgrade seen before the old transaction's isUpgraded version arrives",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx("t2", "plus_monthly", 10, 40, reason: .purchase), F.ri("plus_monthly", signed: 10),
                F.note(.didChangeRenewalPref, .upgrade, signed: 10, product: "plus_monthly"),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "plus active plus_monthly until=d40 NORMAL renews",
                        "pro active plus_monthly until=d40 NORMAL renews",
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t1",
                        "plus_monthly ACTIVE tx=t2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRODUCT_CHANGE/t2@d10 UPGRADE/IMMEDIATE proceeds=10493",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=14990 fee=30% proceeds=10493",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "upgrade takes effect immediately",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t1", "monthly", 0, 30, signed: 10, revokedAt: 10, upgraded: true),
                F.tx("t2", "plus_monthly", 10, 40, reason: .purchase), F.ri("plus_monthly", signed: 10),
                F.note(.didChangeRenewalPref, .upgrade, signed: 10, product: "plus_monthly"),
            ],
            checks: [
                Check(
                    at: 5.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 11.0,
                    entitlements: [
                        "plus active plus_monthly until=d40 NORMAL renews",
                        "pro active plus_monthly until=d40 NORMAL renews",
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t1",
                        "plus_monthly ACTIVE tx=t2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRODUCT_CHANGE/t2@d10 UPGRADE/IMMEDIATE proceeds=10493",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=14990 fee=30% proceeds=10493",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "downgrade takes effect at the next renewal",
            facts: [
                F.tx("t1", "plus_monthly", 0, 30), F.ri("plus_monthly", signed: 0),
                F.ri("plus_monthly", signed: 10, next: "monthly"),
                F.note(.didChangeRenewalPref, .downgrade, signed: 10),
                F.tx("t2", "monthly", 30, 60, reason: .renewal), F.ri("monthly", signed: 30),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "plus active plus_monthly until=d30 NORMAL renews",
                        "pro active plus_monthly until=d30 NORMAL renews",
                    ],
                    subscriptions: [
                        "plus_monthly ACTIVE tx=t1 pending=monthly:DOWNGRADE@d30"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "PRODUCT_CHANGE/t1/monthly/1768089600000@d10 DOWNGRADE/AT_NEXT_RENEWAL",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "plus inactive plus_monthly until=d30 NORMAL no-renew",
                        "pro active monthly until=d60 NORMAL renews",
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2",
                        "plus_monthly PRODUCT_CHANGED tx=t1",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "PRODUCT_CHANGE/t1/monthly/1768089600000@d10 DOWNGRADE/AT_NEXT_RENEWAL",
                        "RENEWAL/t2@d30 DOWNGRADE/AT_NEXT_RENEWAL proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "crossgrade of a different duration waits for the renewal",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 5, next: "yearly"),
                F.tx("t2", "yearly", 30, 395, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 6.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1 pending=yearly:CROSSGRADE@d30"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRODUCT_CHANGE/t1/yearly/1767657600000@d5 CROSSGRADE/AT_NEXT_RENEWAL",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro active yearly until=d395 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t1",
                        "yearly ACTIVE tx=t2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRODUCT_CHANGE/t1/yearly/1767657600000@d5 CROSSGRADE/AT_NEXT_RENEWAL",
                        "RENEWAL/t2@d30 CROSSGRADE/AT_NEXT_RENEWAL proceeds=55993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=79990 fee=30% proceeds=55993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "crossgrade of equal duration is immediate",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t1", "monthly", 0, 30, signed: 12, revokedAt: 12, upgraded: true),
                F.tx("t2", "monthly_alt", 12, 42, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 13.0,
                    entitlements: [
                        "pro active monthly_alt until=d42 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t1",
                        "monthly_alt ACTIVE tx=t2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRODUCT_CHANGE/t2@d12 CROSSGRADE/IMMEDIATE proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "pending downgrade withdrawn before the renewal",
            facts: [
                F.tx("t1", "plus_monthly", 0, 30), F.ri("plus_monthly", signed: 10, next: "monthly"),
                F.ri("plus_monthly", signed: 20), F.tx("t2", "plus_monthly", 30, 60, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "plus active plus_monthly until=d30 NORMAL renews",
                        "pro active plus_monthly until=d30 NORMAL renews",
                    ],
                    subscriptions: [
                        "plus_monthly ACTIVE tx=t1 pending=monthly:DOWNGRADE@d30"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "PRODUCT_CHANGE/t1/monthly/1768089600000@d10 DOWNGRADE/AT_NEXT_RENEWAL",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 21.0,
                    entitlements: [
                        "plus active plus_monthly until=d30 NORMAL renews",
                        "pro active plus_monthly until=d30 NORMAL renews",
                    ],
                    subscriptions: [
                        "plus_monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "PRODUCT_CHANGE/t1/monthly/1768089600000@d10 DOWNGRADE/AT_NEXT_RENEWAL",
                        "PRODUCT_CHANGE/t1/monthly/withdrawn/1768953600000@d20 DOWNGRADE/AT_NEXT_RENEWAL withdrawn",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "plus active plus_monthly until=d60 NORMAL renews",
                        "pro active plus_monthly until=d60 NORMAL renews",
                    ],
                    subscriptions: [
                        "plus_monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "PRODUCT_CHANGE/t1/monthly/1768089600000@d10 DOWNGRADE/AT_NEXT_RENEWAL",
                        "PRODUCT_CHANGE/t1/monthly/withdrawn/1768953600000@d20 DOWNGRADE/AT_NEXT_RENEWAL withdrawn",
                        "RENEWAL/t2@d30 proceeds=10493",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493",
                        "t2 price=14990 fee=30% proceeds=10493",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "upgrade known before the new transaction arrives",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("t1", "monthly", 0, 30, signed: 10, revokedAt: 10, upgraded: true),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro inactive monthly until=d10 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
    ]

    static let offers: [Scenario] = [
        Scenario(
            "offer code redeemed on the first purchase",
            facts: [
                F.tx("t1", "monthly", 0, 30, period: .offerCode, offer: "SPRING", price: 4990)
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d30 OFFER_CODE renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=3493",
                        "OFFER_REDEEMED/t1@d0",
                    ],
                    revenue: [
                        "t1 price=4990 fee=30% proceeds=3493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "promotional offer on renewals is redeemed once",
            facts: [
                F.tx("t1", "monthly", 0, 30),
                F.tx("t2", "monthly", 30, 60, period: .promotional, offer: "save50", price: 4990, reason: .renewal),
                F.tx("t3", "monthly", 60, 90, period: .promotional, offer: "save50", price: 4990, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 61.0,
                    entitlements: [
                        "pro active monthly until=d90 PROMOTIONAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t3"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "RENEWAL/t2@d30 proceeds=3493",
                        "OFFER_REDEEMED/t2@d30",
                        "RENEWAL/t3@d60 proceeds=3493",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=4990 fee=30% proceeds=3493",
                        "t3 price=4990 fee=30% proceeds=3493",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "win-back offer resubscribes a lapsed customer",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, autoRenew: false),
                F.tx("t2", "monthly", 100, 130, period: .winBack, offer: "comeback", price: 2990, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 101.0,
                    entitlements: [
                        "pro active monthly until=d130 WIN_BACK renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "CANCELLATION/t1/1768089600000@d10",
                        "EXPIRATION/t1@d30 CUSTOMER_CANCELLED",
                        "RENEWAL/t2@d100 proceeds=2093",
                        "OFFER_REDEEMED/t2@d100",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=2990 fee=30% proceeds=2093",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "price increase pending consent",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, priceIncrease: 0),
                F.note(.priceIncrease, .pending, signed: 10),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1 priceIncrease=PENDING"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRICE_INCREASE_CONSENT/t1/PENDING/1768089600000@d10",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "price increase accepted",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, priceIncrease: 0),
                F.ri("monthly", signed: 14, priceIncrease: 1), F.note(.priceIncrease, .accepted, signed: 14),
            ],
            checks: [
                Check(
                    at: 15.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1 priceIncrease=ACCEPTED"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRICE_INCREASE_CONSENT/t1/PENDING/1768089600000@d10",
                        "PRICE_INCREASE_CONSENT/t1/ACCEPTED/1768435200000@d14",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "price increase not consented: expires",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 10, priceIncrease: 0),
                F.ri("monthly", signed: 30, autoRenew: false, intent: 3, priceIncrease: 0),
                F.note(.expired, .priceIncrease, signed: 30),
            ],
            checks: [
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=PRICE_INCREASE_NOT_CONSENTED"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "PRICE_INCREASE_CONSENT/t1/PENDING/1768089600000@d10",
                        "EXPIRATION/t1@d30 PRICE_INCREASE_NOT_CONSENTED",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "product no longer for sale: expires",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.note(.expired, .productNotForSale, signed: 30),
            ],
            checks: [
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro inactive monthly until=d30 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=t1 why=PRODUCT_NOT_AVAILABLE"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "EXPIRATION/t1@d30 PRODUCT_NOT_AVAILABLE",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
    ]

    static let oneTime: [Scenario] = [
        Scenario(
            "non-renewing purchases stack their durations",
            facts: [
                F.tx("p1", "season_pass", 0, original: "p1"), F.tx("p2", "season_pass", 10, original: "p2"),
            ],
            checks: [
                Check(
                    at: 20.0,
                    entitlements: [
                        "pass active season_pass until=d59 NORMAL no-renew"
                    ],
                    subscriptions: [],
                    events: [
                        "NON_RENEWING_PURCHASE/p1@d0 proceeds=4193",
                        "NON_RENEWING_PURCHASE/p2@d10 proceeds=4193",
                    ],
                    purchases: [
                        "season_pass tx=p1 active from=d0 until=d31",
                        "season_pass tx=p2 active from=d31 until=d59",
                    ],
                    revenue: [
                        "p1 price=5990 fee=30% proceeds=4193",
                        "p2 price=5990 fee=30% proceeds=4193",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 40.0,
                    entitlements: [
                        "pass active season_pass until=d59 NORMAL no-renew"
                    ],
                    subscriptions: [],
                    events: [
                        "NON_RENEWING_PURCHASE/p1@d0 proceeds=4193",
                        "NON_RENEWING_PURCHASE/p2@d10 proceeds=4193",
                    ],
                    purchases: [
                        "season_pass tx=p1 inactive from=d0 until=d31",
                        "season_pass tx=p2 active from=d31 until=d59",
                    ],
                    revenue: [
                        "p1 price=5990 fee=30% proceeds=4193",
                        "p2 price=5990 fee=30% proceeds=4193",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 60.0,
                    entitlements: [
                        "pass inactive season_pass until=d59 NORMAL no-renew"
                    ],
                    subscriptions: [],
                    events: [
                        "NON_RENEWING_PURCHASE/p1@d0 proceeds=4193",
                        "NON_RENEWING_PURCHASE/p2@d10 proceeds=4193",
                    ],
                    purchases: [
                        "season_pass tx=p1 inactive from=d0 until=d31",
                        "season_pass tx=p2 inactive from=d31 until=d59",
                    ],
                    revenue: [
                        "p1 price=5990 fee=30% proceeds=4193",
                        "p2 price=5990 fee=30% proceeds=4193",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "refunded non-renewing purchase drops out of the stack",
            facts: [
                F.tx("p1", "season_pass", 0, original: "p1"), F.tx("p2", "season_pass", 10, original: "p2"),
                F.tx("p1", "season_pass", 0, original: "p1", signed: 12, revokedAt: 12, revocationReason: 1),
            ],
            checks: [
                Check(
                    at: 13.0,
                    entitlements: [
                        "pass active season_pass until=d41 NORMAL no-renew"
                    ],
                    subscriptions: [],
                    events: [
                        "NON_RENEWING_PURCHASE/p1@d0 proceeds=4193",
                        "NON_RENEWING_PURCHASE/p2@d10 proceeds=4193",
                        "REFUND/p1/1768262400000@d12 DEVELOPER_ISSUE proceeds=-4193",
                    ],
                    purchases: [
                        "season_pass tx=p1 inactive from=d0 until=d31 not-restorable revoked=REFUND",
                        "season_pass tx=p2 active from=d10 until=d41",
                    ],
                    revenue: [
                        "p1 price=5990 fee=30% proceeds=4193 refunded=5990 net=0",
                        "p2 price=5990 fee=30% proceeds=4193",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 42.0,
                    entitlements: [
                        "pass inactive season_pass until=d41 NORMAL no-renew"
                    ],
                    subscriptions: [],
                    events: [
                        "NON_RENEWING_PURCHASE/p1@d0 proceeds=4193",
                        "NON_RENEWING_PURCHASE/p2@d10 proceeds=4193",
                        "REFUND/p1/1768262400000@d12 DEVELOPER_ISSUE proceeds=-4193",
                    ],
                    purchases: [
                        "season_pass tx=p1 inactive from=d0 until=d31 not-restorable revoked=REFUND",
                        "season_pass tx=p2 inactive from=d10 until=d41",
                    ],
                    revenue: [
                        "p1 price=5990 fee=30% proceeds=4193 refunded=5990 net=0",
                        "p2 price=5990 fee=30% proceeds=4193",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "non-consumable lasts forever",
            facts: [
                F.tx("l1", "lifetime", 0, original: "l1")
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "lifetime active lifetime until=never NORMAL no-renew",
                        "pro active lifetime until=never NORMAL no-renew",
                    ],
                    subscriptions: [],
                    events: [
                        "NON_CONSUMABLE_PURCHASE/l1@d0 proceeds=104993"
                    ],
                    purchases: [
                        "lifetime tx=l1 active"
                    ],
                    revenue: [
                        "l1 price=149990 fee=30% proceeds=104993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 3650.0,
                    entitlements: [
                        "lifetime active lifetime until=never NORMAL no-renew",
                        "pro active lifetime until=never NORMAL no-renew",
                    ],
                    subscriptions: [],
                    events: [
                        "NON_CONSUMABLE_PURCHASE/l1@d0 proceeds=104993"
                    ],
                    purchases: [
                        "lifetime tx=l1 active"
                    ],
                    revenue: [
                        "l1 price=149990 fee=30% proceeds=104993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "refunded non-consumable is gone",
            facts: [
                F.tx("l1", "lifetime", 0, original: "l1"),
                F.tx("l1", "lifetime", 0, original: "l1", signed: 3, revokedAt: 3, revocationReason: 0),
            ],
            checks: [
                Check(
                    at: 4.0,
                    entitlements: [
                        "lifetime inactive lifetime until=d3 NORMAL no-renew",
                        "pro inactive lifetime until=d3 NORMAL no-renew",
                    ],
                    subscriptions: [],
                    events: [
                        "NON_CONSUMABLE_PURCHASE/l1@d0 proceeds=104993",
                        "REFUND/l1/1767484800000@d3 OTHER proceeds=-104993",
                    ],
                    purchases: [
                        "lifetime tx=l1 inactive not-restorable revoked=REFUND"
                    ],
                    revenue: [
                        "l1 price=149990 fee=30% proceeds=104993 refunded=149990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "consumable is recorded but never restorable",
            facts: [
                F.tx("c1", "coins_100", 0, original: "c1"), F.tx("c2", "coins_100", 1, original: "c2"),
            ],
            checks: [
                Check(
                    at: 2.0,
                    entitlements: [],
                    subscriptions: [],
                    events: [
                        "CONSUMABLE_PURCHASE/c1@d0 proceeds=693",
                        "CONSUMABLE_PURCHASE/c2@d1 proceeds=693",
                    ],
                    purchases: [
                        "coins_100 tx=c1 inactive not-restorable",
                        "coins_100 tx=c2 inactive not-restorable",
                    ],
                    revenue: [
                        "c1 price=990 fee=30% proceeds=693",
                        "c2 price=990 fee=30% proceeds=693",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "family shared non-consumable",
            facts: [
                F.tx("l1", "lifetime", 0, original: "l1", family: true)
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "lifetime active lifetime until=never NORMAL no-renew family",
                        "pro active lifetime until=never NORMAL no-renew family",
                    ],
                    subscriptions: [],
                    events: [
                        "NON_CONSUMABLE_PURCHASE/l1@d0"
                    ],
                    purchases: [
                        "lifetime tx=l1 active"
                    ],
                    revenue: [
                        "l1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
    ]

    static let money: [Scenario] = [
        Scenario(
            "commission drops to 15 % after one year of paid service",
            facts: (0..<14).map { F.tx("t\($0)", "monthly", Double($0 * 30), Double($0 * 30 + 30), reason: .renewal) },
            checks: [
                Check(
                    at: 400.0,
                    entitlements: [
                        "pro active monthly until=d420 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t13"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t0@d0 proceeds=6993",
                        "RENEWAL/t1@d30 proceeds=6993",
                        "RENEWAL/t2@d60 proceeds=6993",
                        "RENEWAL/t3@d90 proceeds=6993",
                        "RENEWAL/t4@d120 proceeds=6993",
                        "RENEWAL/t5@d150 proceeds=6993",
                        "RENEWAL/t6@d180 proceeds=6993",
                        "RENEWAL/t7@d210 proceeds=6993",
                        "RENEWAL/t8@d240 proceeds=6993",
                        "RENEWAL/t9@d270 proceeds=6993",
                        "RENEWAL/t10@d300 proceeds=6993",
                        "RENEWAL/t11@d330 proceeds=6993",
                        "RENEWAL/t12@d360 proceeds=6993",
                        "RENEWAL/t13@d390 proceeds=8492",
                    ],
                    revenue: [
                        "t0 price=9990 fee=30% proceeds=6993",
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                        "t3 price=9990 fee=30% proceeds=6993",
                        "t4 price=9990 fee=30% proceeds=6993",
                        "t5 price=9990 fee=30% proceeds=6993",
                        "t6 price=9990 fee=30% proceeds=6993",
                        "t7 price=9990 fee=30% proceeds=6993",
                        "t8 price=9990 fee=30% proceeds=6993",
                        "t9 price=9990 fee=30% proceeds=6993",
                        "t10 price=9990 fee=30% proceeds=6993",
                        "t11 price=9990 fee=30% proceeds=6993",
                        "t12 price=9990 fee=30% proceeds=6993",
                        "t13 price=9990 fee=15% proceeds=8492",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "a lapse of up to 60 days keeps the paid days",
            facts: [
                F.tx("t1", "yearly", 0, 365), F.tx("t2", "monthly", 400, 430, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 401.0,
                    entitlements: [
                        "pro active monthly until=d430 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2",
                        "yearly EXPIRED tx=t1 why=UNKNOWN",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=55993",
                        "EXPIRATION/t1@d365 UNKNOWN",
                        "RENEWAL/t2@d400 proceeds=8492",
                    ],
                    revenue: [
                        "t1 price=79990 fee=30% proceeds=55993",
                        "t2 price=9990 fee=15% proceeds=8492",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "a lapse of over 60 days restarts the count",
            facts: [
                F.tx("t1", "yearly", 0, 365), F.tx("t2", "monthly", 430, 460, reason: .purchase),
            ],
            checks: [
                Check(
                    at: 431.0,
                    entitlements: [
                        "pro active monthly until=d460 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t2",
                        "yearly EXPIRED tx=t1 why=UNKNOWN",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=55993",
                        "EXPIRATION/t1@d365 UNKNOWN",
                        "RENEWAL/t2@d430 proceeds=6993",
                    ],
                    revenue: [
                        "t1 price=79990 fee=30% proceeds=55993",
                        "t2 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "trial days are not paid days",
            facts: [
                F.tx("t0", "yearly", 0, 14, period: .trial), F.tx("t1", "yearly", 14, 365, reason: .renewal),
                F.tx("t2", "yearly", 365, 730, reason: .renewal),
            ],
            checks: [
                Check(
                    at: 366.0,
                    entitlements: [
                        "pro active yearly until=d730 NORMAL renews"
                    ],
                    subscriptions: [
                        "yearly ACTIVE tx=t2"
                    ],
                    events: [
                        "TRIAL_STARTED/t0@d0",
                        "TRIAL_CONVERTED/t1@d14 proceeds=55993",
                        "RENEWAL/t2@d365 proceeds=55993",
                    ],
                    revenue: [
                        "t0 price=0 fee=0% proceeds=0",
                        "t1 price=79990 fee=30% proceeds=55993",
                        "t2 price=79990 fee=30% proceeds=55993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ])
            ]),
        Scenario(
            "Small Business Program pays 15 % on everything", catalog: Fixture.smallBusinessCatalog,
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("l1", "lifetime", 1, original: "l1"),
            ],
            checks: [
                Check(
                    at: 2.0,
                    entitlements: [
                        "lifetime active lifetime until=never NORMAL no-renew",
                        "pro active lifetime until=never NORMAL no-renew",
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=8492",
                        "NON_CONSUMABLE_PURCHASE/l1@d1 proceeds=127492",
                    ],
                    purchases: [
                        "lifetime tx=l1 active"
                    ],
                    revenue: [
                        "t1 price=9990 fee=15% proceeds=8492",
                        "l1 price=149990 fee=15% proceeds=127492",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "catalog price when the transaction has none",
            facts: [
                .transaction(
                    TransactionFact(
                        transactionId: "t1", originalTransactionId: "o1", productId: "monthly", purchaseDate: F.day(0),
                        expiresDate: F.day(30), signedDate: F.day(0), environment: .production))
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "upgrade keeps accruing paid days across products",
            facts: (0..<12).map { F.tx("t\($0)", "monthly", Double($0 * 30), Double($0 * 30 + 30), reason: .renewal) }
                + [
                    F.tx("t11", "monthly", 330, 360, signed: 340, revokedAt: 340, upgraded: true),
                    F.tx("u1", "plus_monthly", 340, 370, reason: .purchase),
                    F.tx("u2", "plus_monthly", 370, 400, reason: .renewal),
                ],
            checks: [
                Check(
                    at: 371.0,
                    entitlements: [
                        "plus active plus_monthly until=d400 NORMAL renews",
                        "pro active plus_monthly until=d400 NORMAL renews",
                    ],
                    subscriptions: [
                        "monthly PRODUCT_CHANGED tx=t11",
                        "plus_monthly ACTIVE tx=u2",
                    ],
                    events: [
                        "INITIAL_PURCHASE/t0@d0 proceeds=6993",
                        "RENEWAL/t1@d30 proceeds=6993",
                        "RENEWAL/t2@d60 proceeds=6993",
                        "RENEWAL/t3@d90 proceeds=6993",
                        "RENEWAL/t4@d120 proceeds=6993",
                        "RENEWAL/t5@d150 proceeds=6993",
                        "RENEWAL/t6@d180 proceeds=6993",
                        "RENEWAL/t7@d210 proceeds=6993",
                        "RENEWAL/t8@d240 proceeds=6993",
                        "RENEWAL/t9@d270 proceeds=6993",
                        "RENEWAL/t10@d300 proceeds=6993",
                        "RENEWAL/t11@d330 proceeds=6993",
                        "PRODUCT_CHANGE/u1@d340 UPGRADE/IMMEDIATE proceeds=10493",
                        "RENEWAL/u2@d370 proceeds=12742",
                    ],
                    revenue: [
                        "t0 price=9990 fee=30% proceeds=6993",
                        "t1 price=9990 fee=30% proceeds=6993",
                        "t2 price=9990 fee=30% proceeds=6993",
                        "t3 price=9990 fee=30% proceeds=6993",
                        "t4 price=9990 fee=30% proceeds=6993",
                        "t5 price=9990 fee=30% proceeds=6993",
                        "t6 price=9990 fee=30% proceeds=6993",
                        "t7 price=9990 fee=30% proceeds=6993",
                        "t8 price=9990 fee=30% proceeds=6993",
                        "t9 price=9990 fee=30% proceeds=6993",
                        "t10 price=9990 fee=30% proceeds=6993",
                        "t11 price=9990 fee=30% proceeds=6993",
                        "u1 price=14990 fee=30% proceeds=10493",
                        "u2 price=14990 fee=15% proceeds=12742",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
    ]

    static let misc: [Scenario] = [
        Scenario(
            "sandbox and production never mix",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("s1", "yearly", 0, 365, original: "so", environment: .sandbox),
                F.ri("yearly", signed: 0, original: "so", environment: .sandbox),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "pro active monthly until=d30 NORMAL renews"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993"
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ],
                    notes: [
                        "ignored 2 fact(s) from Sandbox: Production state never mixes environments"
                    ])
            ]),
        Scenario(
            "several products unlock one entitlement: furthest expiry grants it",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("l1", "lifetime", 5, original: "l1"),
                F.tx("n1", "news_monthly", 0, 30, original: "on"),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "news active news_monthly until=d30 NORMAL renews",
                        "pro active monthly until=d30 NORMAL renews",
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1",
                        "news_monthly ACTIVE tx=n1",
                    ],
                    events: [
                        "INITIAL_PURCHASE/n1@d0 proceeds=3493",
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                    ],
                    revenue: [
                        "n1 price=4990 fee=30% proceeds=3493",
                        "t1 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 6.0,
                    entitlements: [
                        "lifetime active lifetime until=never NORMAL no-renew",
                        "news active news_monthly until=d30 NORMAL renews",
                        "pro active lifetime until=never NORMAL no-renew",
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1",
                        "news_monthly ACTIVE tx=n1",
                    ],
                    events: [
                        "INITIAL_PURCHASE/n1@d0 proceeds=3493",
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "NON_CONSUMABLE_PURCHASE/l1@d5 proceeds=104993",
                    ],
                    purchases: [
                        "lifetime tx=l1 active"
                    ],
                    revenue: [
                        "n1 price=4990 fee=30% proceeds=3493",
                        "t1 price=9990 fee=30% proceeds=6993",
                        "l1 price=149990 fee=30% proceeds=104993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "one product unlocks several entitlements",
            facts: [
                F.tx("t1", "plus_monthly", 0, 30)
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "plus active plus_monthly until=d30 NORMAL renews",
                        "pro active plus_monthly until=d30 NORMAL renews",
                    ],
                    subscriptions: [
                        "plus_monthly ACTIVE tx=t1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493"
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 31.0,
                    entitlements: [
                        "plus inactive plus_monthly until=d30 NORMAL no-renew",
                        "pro inactive plus_monthly until=d30 NORMAL no-renew",
                    ],
                    subscriptions: [
                        "plus_monthly EXPIRED tx=t1 why=UNKNOWN"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=10493",
                        "EXPIRATION/t1@d30 UNKNOWN",
                    ],
                    revenue: [
                        "t1 price=14990 fee=30% proceeds=10493"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
        Scenario(
            "intro offer used in one group leaves another eligible",
            facts: [
                F.tx("t1", "monthly", 0, 7, period: .intro, price: 990),
                F.tx("n1", "news_monthly", 0, 30, original: "on"),
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [
                        "news active news_monthly until=d30 NORMAL renews",
                        "pro active monthly until=d7 INTRO renews",
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=t1",
                        "news_monthly ACTIVE tx=n1",
                    ],
                    events: [
                        "INITIAL_PURCHASE/n1@d0 proceeds=3493",
                        "INITIAL_PURCHASE/t1@d0 proceeds=693",
                    ],
                    revenue: [
                        "n1 price=4990 fee=30% proceeds=3493",
                        "t1 price=990 fee=30% proceeds=693",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium ineligible",
                    ])
            ]),
        Scenario(
            "a product missing from the catalog is recorded and grants nothing",
            facts: [
                F.tx("x1", "mystery", 0, original: "x1")
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [],
                    subscriptions: [],
                    events: [
                        "NON_CONSUMABLE_PURCHASE/x1@d0"
                    ],
                    purchases: [
                        "mystery tx=x1 active"
                    ],
                    revenue: [
                        "x1 price=0 fee=0% proceeds=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ],
                    notes: [
                        "product mystery is not in the catalog: recorded, grants nothing"
                    ])
            ]),
        Scenario(
            "renewal info before its transaction waits for it",
            facts: [
                F.ri("monthly", signed: 0, original: "o9")
            ],
            checks: [
                Check(
                    at: 1.0,
                    entitlements: [],
                    subscriptions: [],
                    events: [],
                    revenue: [],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ],
                    notes: [
                        "renewal info for o9 has no transaction yet: waiting for it"
                    ])
            ]),
        Scenario(
            "a later signed version wins whatever the order",
            facts: [
                F.tx("t1", "monthly", 0, 30, signed: 10, revokedAt: 10, revocationReason: 1),
                F.tx("t1", "monthly", 0, 30), F.tx("t1", "monthly", 0, 30), F.ri("monthly", signed: 0),
            ],
            checks: [
                Check(
                    at: 11.0,
                    entitlements: [
                        "pro inactive monthly until=d10 NORMAL no-renew"
                    ],
                    subscriptions: [
                        "monthly REFUNDED tx=t1 revoked=REFUND@d10:DEVELOPER_ISSUE"
                    ],
                    events: [
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "REFUND/t1/1768089600000@d10 DEVELOPER_ISSUE proceeds=-6993",
                    ],
                    revenue: [
                        "t1 price=9990 fee=30% proceeds=6993 refunded=9990 net=0"
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ])
            ]),
        Scenario(
            "family shared and purchased of the same product",
            facts: [
                F.tx("t1", "monthly", 0, 30), F.tx("f1", "monthly", 0, 40, original: "of", family: true),
            ],
            checks: [
                Check(
                    at: 31.0,
                    entitlements: [
                        "pro active monthly until=d40 NORMAL renews family"
                    ],
                    subscriptions: [
                        "monthly ACTIVE tx=f1"
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0",
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "EXPIRATION/t1@d30 UNKNOWN",
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0",
                        "t1 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
                Check(
                    at: 41.0,
                    entitlements: [
                        "pro inactive monthly until=d40 NORMAL no-renew family"
                    ],
                    subscriptions: [
                        "monthly EXPIRED tx=f1 why=UNKNOWN"
                    ],
                    events: [
                        "INITIAL_PURCHASE/f1@d0",
                        "INITIAL_PURCHASE/t1@d0 proceeds=6993",
                        "EXPIRATION/t1@d30 UNKNOWN",
                        "EXPIRATION/f1@d40 UNKNOWN",
                    ],
                    revenue: [
                        "f1 price=0 fee=0% proceeds=0",
                        "t1 price=9990 fee=30% proceeds=6993",
                    ],
                    eligibility: [
                        "news eligible",
                        "premium eligible",
                    ]),
            ]),
    ]
}
