import AppStoreModels
import Foundation
import HTTPServer
import Storage

/// What every signed-in page knows: the session (for its CSRF token), the app shown and the
/// section, so the navigation marks where the user is.
/// - Note: Immutable value; `Sendable`.
struct DashboardPageContext: Sendable {
    enum Section: String, Sendable {
        case apps, overview, cohorts, customers, operations
    }

    var session: DashboardSession
    var csrfToken: String
    var appId: String?
    var section: Section
}

/// The frame of every page (skip link, navigation, sign-out form) and the pages that are not
/// about one app: sign-in, the app list, errors.
/// - Note: Stateless; thread-safe.
enum DashboardPages {
    static func layout(title: String, context: DashboardPageContext?, body: HTML) -> HTML {
        var links: [HTML] = []
        if let context {
            if context.session.kind == .admin {
                links.append(link("/dashboard/apps", "Apps", current: context.section == .apps))
            }
            if let appId = context.appId {
                let base = "/dashboard/apps/" + DashboardHTTP.encode(appId)
                links.append(link(base, "Overview", current: context.section == .overview))
                links.append(link(base + "/cohorts", "Cohorts", current: context.section == .cohorts))
                links.append(link(base + "/customers", "Customers", current: context.section == .customers))
                links.append(link(base + "/operations", "Operations", current: context.section == .operations))
            }
            links.append(
                """
                <form method="post" action="/dashboard/sign-out">\(csrfField(context.csrfToken))\
                <button type="submit" class="secondary">Sign out</button></form>
                """)
        }
        let appName: HTML = context?.appId.map { " <span class=\"muted\">· \($0)</span>" } ?? ""
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Storekeeper</title>
            <link rel="stylesheet" href="\(DashboardStylesheet.path)"></head>
            <body><a class="skip" href="#main">Skip to content</a>
            <header><nav aria-label="Dashboard"><span class="brand">Storekeeper\(appName)</span>\(links)</nav></header>
            <main id="main" tabindex="-1">
            \(body)
            </main></body></html>

            """
    }

    static func link(_ href: String, _ text: String, current: Bool) -> HTML {
        current ? "<a href=\"\(href)\" aria-current=\"page\">\(text)</a>" : "<a href=\"\(href)\">\(text)</a>"
    }

    static func csrfField(_ token: String) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">"
    }

    static func signIn(csrfToken: String, message: String?) -> HTML {
        let notice: HTML = message.map { "<p class=\"notice error\" role=\"alert\">\($0)</p>" } ?? ""
        return layout(
            title: "Sign in", context: nil,
            body: """
                <h1>Sign in</h1>
                <div class="signin">\(notice)
                <p>Use an app's secret key (that app's pages) or an admin key (every app). The key is sent in this \
                form only, never in a URL; the session lasts until you sign out or it expires.</p>
                <form method="post" action="/dashboard/sign-in">\(csrfField(csrfToken))
                <label for="key">API key<input id="key" name="key" type="password" autocomplete="off" \
                required maxlength="256" autofocus></label>
                <p><button type="submit">Sign in</button></p></form></div>
                """)
    }

    static func apps(_ apps: [AppRecord], context: DashboardPageContext) -> HTML {
        let rows = apps.map { app -> HTML in
            let base = "/dashboard/apps/" + DashboardHTTP.encode(app.id)
            return """
                <tr><td><a href="\(base)">\(app.id)</a></td><td>\(app.bundleId)</td>\
                <td>\(app.environments.map(\.rawValue).joined(separator: ", "))</td></tr>
                """
        }
        return layout(
            title: "Apps", context: context,
            body: """
                <h1>Apps</h1>
                <div class="scroll"><table><thead><tr><th scope="col">App</th><th scope="col">Bundle id</th>\
                <th scope="col">Environments</th></tr></thead><tbody>\(rows)</tbody></table></div>
                """)
    }

    static func failure(_ failure: DashboardFailure, context: DashboardPageContext?) -> HTTPResponse {
        DashboardHTTP.page(
            layout(
                title: "Error", context: context,
                body: """
                    <h1>\(failure.status.code == 404 ? "Not found" : "Not possible")</h1>
                    <p class="notice error" role="alert">\(failure.message)</p>
                    <p><a href="/dashboard">Back to the dashboard</a></p>
                    """),
            status: failure.status)
    }

    /// `instant` as `2026-03-01 12:00 UTC` (minutes are what people compare on these pages).
    static func time(_ instant: Timestamp?) -> String {
        guard let instant else { return "—" }
        let text = instant.description
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}
