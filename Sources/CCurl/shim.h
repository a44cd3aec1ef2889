#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

/*
 * Swift cannot call C variadic functions: curl_easy_setopt and curl_easy_getinfo take their
 * argument through `...`. One wrapper per argument type, each passing exactly the type libcurl
 * reads for that kind of option, is the whole C surface PinnedHTTPTransport needs.
 */

typedef size_t (*CCurl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*CCurl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                       curl_off_t upload_total, curl_off_t upload_now);

/* Once per process (reference-counted by libcurl; FoundationNetworking may call it too). */
static inline CURLcode CCurl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

/* Options whose argument is a `long` (flags, timeouts in ms, versions). */
static inline CURLcode CCurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/* Options whose argument is a `curl_off_t` (sizes: POSTFIELDSIZE_LARGE, MAXFILESIZE_LARGE). */
static inline CURLcode CCurl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/* String options: libcurl copies the string (NULL resets the option to its default). */
static inline CURLcode CCurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/* Pointer options (WRITEDATA, HEADERDATA, XFERINFODATA, COPYPOSTFIELDS). */
static inline CURLcode CCurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/* List options (HTTPHEADER, CONNECT_TO): the list must outlive the transfer. */
static inline CURLcode CCurl_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/* WRITEFUNCTION and HEADERFUNCTION. */
static inline CURLcode CCurl_setopt_data_callback(CURL *handle, CURLoption option, CCurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode CCurl_setopt_progress_callback(CURL *handle, CCurl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/* CURLINFO_RESPONSE_CODE and other `long` infos. */
static inline CURLcode CCurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
