/* gmeter 404 page: release copies are light (their boards, data and charts); a system or agent
   page a release copy used to hold now lives on the current site at the same slug, so an old
   link to releases/<name>/systems/<slug>/ or releases/<name>/agents/<slug>/ is sent there. */
(function () {
  "use strict";
  var m = window.location.pathname.match(/^(.*\/)releases\/[^\/]+\/((?:systems|agents)\/[a-z0-9-]+\/?)(?:index\.html)?$/);
  if (m) { window.location.replace(m[1] + m[2].replace(/\/?$/, "/")); }
})();
