// libcurl for Swift, loaded on first use (see cly_library_loader.h): every function Cohorly uses, as a
// `cly_curl_*` wrapper. `curl_easy_setopt` and `curl_easy_getinfo` are variadic and do not import, so each
// argument type gets its own wrapper. <curl/curl.h> is included for types and constants only: libcurl is not
// linked, so calling a `curl_*` function directly fails at link time.
#ifndef CLY_CURL_H
#define CLY_CURL_H

#include <curl/curl.h>
#include <stdint.h>

/// NULL once libcurl is loaded and initialised (`curl_global_init(CURL_GLOBAL_ALL)`), else why it is not.
const char *cly_curl_load_error(void);

/// `curl_easy_init`, or NULL when libcurl cannot be loaded (`cly_curl_load_error` says why).
CURL *cly_curl_easy_init(void);
void cly_curl_easy_cleanup(CURL *handle);
void cly_curl_easy_reset(CURL *handle);
/// `curl_easy_perform`. It installs its own progress callback (CURLOPT_XFERINFOFUNCTION): at exit() the running
/// transfer is aborted and the call returns before the TLS library is torn down (see cly_curl.c).
CURLcode cly_curl_easy_perform(CURL *handle);
const char *cly_curl_easy_strerror(CURLcode code);
/// `curl_slist_append` (NULL when libcurl cannot be loaded).
struct curl_slist *cly_curl_slist_append(struct curl_slist *list, const char *text);
void cly_curl_slist_free_all(struct curl_slist *list);

CURLcode cly_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode cly_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode cly_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode cly_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode cly_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
typedef size_t (*cly_curl_data_callback)(char *data, size_t size, size_t count, void *context);
CURLcode cly_curl_setopt_data_callback(CURL *handle, CURLoption option, cly_curl_data_callback value);
CURLcode cly_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode cly_curl_getinfo_string(CURL *handle, CURLINFO info, char **value);

#endif
