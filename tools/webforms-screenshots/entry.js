// The page make-screenshots.sh opens: ODK Web Forms (the Vue component ODK Central uses)
// rendering the XForm named by ?form=..., filled in with ?id=... when given.
import { createApp, h } from 'vue';
import { OdkWebForm, webFormsPlugin } from '@getodk/web-forms';

const params = new URLSearchParams(location.search);
const formXml = await (await fetch(params.get('form'))).text();
createApp({
  render: () => h(OdkWebForm, {
    formXml,
    fetchFormAttachment: async () => new Response('', { status: 404 }),
  }),
}).use(webFormsPlugin).mount('#app');
